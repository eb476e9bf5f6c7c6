-- Pools across connections (invariant 24; docs/design.md section 19). A pool is a routable
-- name whose members are (connection, model) pairs of one protocol with a weight (balanced) or
-- an order (priority: the order of `members`). `members` is a JSON array of
-- {"connection_id", "slug", "model"|null, "weight"}: the slug is kept so a member whose
-- connection was removed is still named in the gate report. `mode` is the mode asked for
-- (`balanced`/`priority`, NULL while never activated); `active` is set only by a gated
-- activation (`pool activate`); the relay routes an active pool while at least one member's
-- gates hold. `wanted`: an imported file had it activated; it is activated once its gates
-- hold. `launch`: the launcher's SWRR position over members (`switchyard exec POOL`, JSON
-- {"current": [[member, weight]...], "last": member|null}), so consecutive launches rotate.
CREATE TABLE pools (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    protocol     TEXT NOT NULL,
    members      TEXT NOT NULL,
    mode         TEXT,
    active       INTEGER NOT NULL DEFAULT 0,
    wanted       INTEGER NOT NULL DEFAULT 0,
    launch       TEXT,
    revision     INTEGER NOT NULL DEFAULT 1,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);

-- The pool an attempt was routed through (NULL outside pools) and the connection the client
-- named when the attempt went to another one (a fallback hop): `attempts prim` shows that a
-- turn went to `spare`.
ALTER TABLE attempts ADD COLUMN pool_id TEXT;
ALTER TABLE attempts ADD COLUMN origin_id TEXT;
CREATE INDEX attempts_pool ON attempts(pool_id, at_ms) WHERE pool_id IS NOT NULL;
CREATE INDEX attempts_origin ON attempts(origin_id, at_ms) WHERE origin_id IS NOT NULL;
