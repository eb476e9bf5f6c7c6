-- Protocol `gemini` (issue 30, docs/design.md "The Gemini dialect"): the connections table's CHECK
-- gains the word. SQLite cannot alter a CHECK, so the table is rebuilt the documented way
-- (https://www.sqlite.org/lang_altertable.html#otheralter): a new table, the rows copied as they
-- are, the old one dropped, the new one renamed. `Store::open` runs migrations on a connection with
-- foreign keys OFF (else the DROP would cascade into profiles and fallback_chains) and runs
-- `PRAGMA foreign_key_check` afterwards; profiles and fallback_chains refer to `connections` by
-- name, so they point at the rebuilt table with no change.

CREATE TABLE connections_0012 (
    id                TEXT PRIMARY KEY NOT NULL,
    slug              TEXT NOT NULL UNIQUE,
    protocol          TEXT NOT NULL CHECK (protocol IN ('openai', 'anthropic', 'gemini')),
    base_url          TEXT NOT NULL,
    headers_json      TEXT NOT NULL DEFAULT '[]',
    models_json       TEXT NOT NULL DEFAULT '[]',
    mapping_json      TEXT NOT NULL DEFAULT '{}',
    basis_fingerprint TEXT NOT NULL,
    routing_mode      TEXT NOT NULL DEFAULT 'legacy' CHECK (routing_mode IN ('legacy', 'balanced', 'priority')),
    routing_state     TEXT NOT NULL DEFAULT 'active' CHECK (routing_state IN ('active', 'suspended')),
    routing_note      TEXT,
    wanted_mode       TEXT CHECK (wanted_mode IS NULL OR wanted_mode IN ('balanced', 'priority')),
    activated_at      INTEGER,
    activated_by      TEXT,
    revision          INTEGER NOT NULL DEFAULT 1,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);

INSERT INTO connections_0012 (id, slug, protocol, base_url, headers_json, models_json, mapping_json,
    basis_fingerprint, routing_mode, routing_state, routing_note, wanted_mode, activated_at, activated_by,
    revision, created_at, updated_at)
SELECT id, slug, protocol, base_url, headers_json, models_json, mapping_json,
    basis_fingerprint, routing_mode, routing_state, routing_note, wanted_mode, activated_at, activated_by,
    revision, created_at, updated_at
FROM connections;

DROP TABLE connections;

ALTER TABLE connections_0012 RENAME TO connections;
