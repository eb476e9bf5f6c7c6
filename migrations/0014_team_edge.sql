-- The team relay's edge (docs/design.md, "Team relay edge"; invariants 26 and 27).
--
-- sealed_secrets: the sealed vault's rows. A secret is kept here only encrypted: ChaCha20-Poly1305
-- under the master key (which is never stored in the database), one random 96-bit nonce per
-- write, the locator (service, account) bound as associated data so a row cannot be moved to
-- another address. key_id names the master key a row was sealed under (a hash of the key, never
-- the key): a process holding another key refuses to start instead of failing on each read.
CREATE TABLE sealed_secrets (
    service    TEXT    NOT NULL,
    account    TEXT    NOT NULL,
    key_id     TEXT    NOT NULL,
    nonce      BLOB    NOT NULL,
    ciphertext BLOB    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (service, account)
);

-- relay_users: per-person relay tokens. Only SHA-256 of the token is kept (the token is 256
-- random bits, shown once by `relay users add`); revoked_at set = refused from then on. A name
-- can be added again after a revocation (a new token, a new created_at).
CREATE TABLE relay_users (
    name       TEXT    NOT NULL PRIMARY KEY,
    token_hash TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

-- The relay user an attempt was made for (a relay_users name, never the token); NULL for the
-- install's own local token.
ALTER TABLE attempts ADD COLUMN user_name TEXT;
