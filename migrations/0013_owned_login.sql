-- Owned logins (docs/design.md, section 20 "Owned Codex login"; invariants 21 and 22): what the
-- database keeps about an `oauth` profile's ChatGPT sign-in. Never a token: the access and
-- refresh tokens live in the profile's one keychain item ({access, refresh, expires_at,
-- account_id, generation}); the access token's expiry is the profile's `expires_at` (0008).
--   login_account_id     the ChatGPT account the login belongs to (sent as chatgpt-account-id)
--   login_plan           the plan the id token names (plus, pro, team, ...), if any
--   login_generation     changes only when the user signs in again (a refresh keeps it);
--                        evidence binds to it through the credential revision a sign-in bumps
--   login_refreshed_at   when the last refresh (or the sign-in) was written (unix ms)
--   login_outcome        how the last refresh went: succeeded | failed | rejected
--   login_blocked_until  no refresh before this (a 429's Retry-After, a transient backoff)
ALTER TABLE profiles ADD COLUMN login_account_id TEXT;
ALTER TABLE profiles ADD COLUMN login_plan TEXT;
ALTER TABLE profiles ADD COLUMN login_generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE profiles ADD COLUMN login_refreshed_at INTEGER;
ALTER TABLE profiles ADD COLUMN login_outcome TEXT
    CHECK (login_outcome IS NULL OR login_outcome IN ('succeeded', 'failed', 'rejected'));
ALTER TABLE profiles ADD COLUMN login_blocked_until INTEGER;
