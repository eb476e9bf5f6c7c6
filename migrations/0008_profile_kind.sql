-- Profile kinds (docs/design.md, "kind"; invariants 20 and 21). Every existing profile keeps
-- being an API key: `kind` defaults to 'api_key'.
--   kind        what the credential is. 'oauth' is allowed here so its later issue needs no
--               table rebuild; the engine does not create it yet.
--   client      the official client a 'token' or 'external' credential belongs to.
--   expires_at  a token's expiry (unix ms), entered by the user or learned later; NULL when
--               unknown. Credential health is computed from it with the clock, never stored.
-- A token lives in the keychain like a key (the locator columns); an external profile has no
-- locator: the official CLI keeps its login in <data dir>/accounts/<profile id>/, which
-- Switchyard never reads (only whether the CLI's credential file exists).
ALTER TABLE profiles ADD COLUMN kind TEXT NOT NULL DEFAULT 'api_key'
    CHECK (kind IN ('api_key', 'token', 'external', 'oauth'));
ALTER TABLE profiles ADD COLUMN client TEXT
    CHECK (client IS NULL OR client IN ('claude-code', 'codex'));
ALTER TABLE profiles ADD COLUMN expires_at INTEGER;
