-- Switchyard foundation schema. Forward-only: never edit once landed; add a new file.
-- Times are unix milliseconds (UTC). Every mutable row carries `revision` for CAS writes.

CREATE TABLE settings (
    key        TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    revision   INTEGER NOT NULL DEFAULT 1,
    updated_at INTEGER NOT NULL
);

CREATE TABLE connections (
    id                TEXT PRIMARY KEY NOT NULL,
    slug              TEXT NOT NULL UNIQUE,
    protocol          TEXT NOT NULL CHECK (protocol IN ('openai', 'anthropic')),
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

CREATE TABLE profiles (
    id                  TEXT PRIMARY KEY NOT NULL,
    connection_id       TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    label               TEXT NOT NULL,
    weight              INTEGER NOT NULL CHECK (weight >= 1),
    priority            INTEGER NOT NULL DEFAULT 0,
    enabled             INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    is_primary          INTEGER NOT NULL DEFAULT 0 CHECK (is_primary IN (0, 1)),
    locator_service     TEXT,
    locator_account     TEXT,
    credential_revision INTEGER NOT NULL DEFAULT 1,
    revision            INTEGER NOT NULL DEFAULT 1,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    UNIQUE (connection_id, label)
);
CREATE UNIQUE INDEX profiles_one_primary ON profiles(connection_id) WHERE is_primary = 1;

-- Latest test/discovery result per profile, bound to the credential revision and basis it was taken under.
CREATE TABLE evidence (
    profile_id          TEXT PRIMARY KEY NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    credential_revision INTEGER NOT NULL,
    basis_fingerprint   TEXT NOT NULL,
    verified_at         INTEGER NOT NULL,
    outcome             TEXT NOT NULL,
    source              TEXT NOT NULL,
    models_json         TEXT NOT NULL DEFAULT '[]',
    detail              TEXT,
    revision            INTEGER NOT NULL DEFAULT 1
);

-- Persisted cooldowns. model = '' is the credential-wide circuit. Probe claims are never stored.
CREATE TABLE circuits (
    profile_id    TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    model         TEXT NOT NULL DEFAULT '',
    state         TEXT NOT NULL CHECK (state IN ('closed', 'open')),
    kind          TEXT,
    until_ms      INTEGER,
    backoff_level INTEGER NOT NULL DEFAULT 0,
    revision      INTEGER NOT NULL DEFAULT 1,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (profile_id, model)
);

-- Append-only ledger of physical attempts. profile_id is the stable id, never the label.
CREATE TABLE attempts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms         INTEGER NOT NULL,
    connection_id TEXT NOT NULL,
    turn          TEXT NOT NULL,
    attempt       INTEGER NOT NULL,
    profile_id    TEXT NOT NULL,
    reason        TEXT NOT NULL,
    model         TEXT,
    status        INTEGER,
    failure_kind  TEXT,
    scope         TEXT,
    ttfb_ms       INTEGER,
    duration_ms   INTEGER,
    input_tokens  INTEGER,
    output_tokens INTEGER
);
CREATE INDEX attempts_by_connection ON attempts(connection_id, id DESC);

-- Keychain write-ahead journal: a locator is recorded here before its secret is written and
-- before an old secret is deleted, so start-up can remove secrets no profile references.
CREATE TABLE secret_journal (
    service    TEXT NOT NULL,
    account    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (service, account)
);
