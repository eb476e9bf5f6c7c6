-- The web console's sign-in sessions (issue 43; docs/design.md §18, invariant 31). An admin's
-- relay token is exchanged for a session: the cookie's value and the CSRF token are kept as
-- SHA-256 hashes only. A session lives in the store so every replica honours it; it ends at
-- expires_at, on sign-out, or as soon as the token it was made from is revoked or rotated (the
-- relay checks token_hash against relay_users on every call).
CREATE TABLE console_sessions (
    id_hash    TEXT    NOT NULL PRIMARY KEY,
    user_name  TEXT    NOT NULL,
    token_hash TEXT    NOT NULL,
    csrf_hash  TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
