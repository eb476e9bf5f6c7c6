-- Routing state a team relay's replicas share (issue 31, invariant 25). Used only when the store
-- is shared (Postgres); an embedded SQLite store keeps these in the relay's memory and leaves the
-- tables empty. Rows expire (expires_ms, the engine clock's wall time); replicas sweep them.

-- Turn bindings (scope 'turn', model ''), conversation bindings (scope 'conversation', per model)
-- and pools' conversation members (scope 'pool:<pool id>'): key → the profile (or member) kept.
CREATE TABLE route_bindings (
    scope       TEXT NOT NULL,
    key         TEXT NOT NULL,
    model       TEXT NOT NULL DEFAULT '',
    target      TEXT NOT NULL,
    last_ms     BIGINT NOT NULL,
    window_ms   BIGINT NOT NULL,
    expires_ms  BIGINT NOT NULL,
    PRIMARY KEY (scope, key, model)
);
CREATE INDEX route_bindings_expiry ON route_bindings (expires_ms);

-- SWRR current weights per (connection or 'pool:<id>', model), advanced by compare-and-swap on
-- revision: weights hold over every replica's decisions together.
CREATE TABLE swrr_positions (
    target      TEXT NOT NULL,
    model       TEXT NOT NULL,
    weights     TEXT NOT NULL,
    revision    BIGINT NOT NULL,
    PRIMARY KEY (target, model)
);

-- Which profile produced a Responses answer (previous_response_id continuity across replicas).
CREATE TABLE response_origins (
    connection_id TEXT NOT NULL,
    response_id   TEXT NOT NULL,
    profile_id    TEXT NOT NULL,
    expires_ms    BIGINT NOT NULL,
    PRIMARY KEY (connection_id, response_id)
);
CREATE INDEX response_origins_expiry ON response_origins (expires_ms);

-- The half-open probe as a lease: claimed by one conditional update, lost when it ends.
ALTER TABLE circuits ADD COLUMN lease_owner TEXT;
ALTER TABLE circuits ADD COLUMN lease_until_ms BIGINT;
