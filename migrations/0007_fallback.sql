-- Fallback chains (invariant 17): per connection an ordered list of other connections of the
-- same protocol, tried only when the connection has no eligible profile, before any output.
-- `hops` is a JSON array of {"connection_id", "model"|null} (model NULL: the requested model,
-- unchanged). A chain is stored inactive; `active` is set only by a gated activation, and the
-- relay uses an active chain only while its gates hold. `wanted`: an imported file had it
-- activated; it is activated once its gates hold (like a pending routing mode). Goes with
-- its connection.
CREATE TABLE fallback_chains (
    connection_id TEXT PRIMARY KEY REFERENCES connections(id) ON DELETE CASCADE,
    hops          TEXT NOT NULL,
    active        INTEGER NOT NULL DEFAULT 0,
    activated_at  INTEGER,
    wanted        INTEGER NOT NULL DEFAULT 0,
    revision      INTEGER NOT NULL DEFAULT 1,
    updated_at    INTEGER NOT NULL
);
