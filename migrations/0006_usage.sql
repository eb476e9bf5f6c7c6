-- Usage and cost (docs/design.md, "Usage and cost", invariant 18: facts, never guesses).
-- `prices`: the user's price table, USD per million tokens, keyed by the client-facing model
-- name the ledger records. A NULL cache price means "not given": rows with cache tokens of
-- that model then have an unknown cost, never an estimated one.
CREATE TABLE prices (
    model                    TEXT PRIMARY KEY,
    input_usd_per_mtok       REAL NOT NULL,
    output_usd_per_mtok      REAL NOT NULL,
    cache_read_usd_per_mtok  REAL,
    cache_write_usd_per_mtok REAL,
    updated_at               INTEGER NOT NULL
);

-- A subscription key's monthly fee, spread over that key's tokens of each calendar month (in
-- the user's time zone); such a key's rows are costed by the fee alone. Goes with its profile.
CREATE TABLE key_fees (
    profile_id  TEXT PRIMARY KEY REFERENCES profiles(id) ON DELETE CASCADE,
    monthly_usd REAL NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- The caller's tags of an attempt (`x-switchyard-tag-NAME: value` request headers, never
-- forwarded upstream) as a JSON object of name -> value; NULL when the request had none.
ALTER TABLE attempts ADD COLUMN tags TEXT;

-- Usage and the ledger export read a connection's rows by time.
CREATE INDEX attempts_by_connection_time ON attempts(connection_id, at_ms);
