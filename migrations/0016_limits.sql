-- Governance of a relay's users (issue 41; docs/design.md "Limits", invariants 28-31).
--
-- relay_users gains a role, a scope and an expiry. Scope lists are comma-separated names
-- (connections and pools; model patterns with '*'); empty = all. revision counts every change
-- (the audit rows name it before and after).
ALTER TABLE relay_users ADD COLUMN role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin'));
ALTER TABLE relay_users ADD COLUMN connections TEXT NOT NULL DEFAULT '';
ALTER TABLE relay_users ADD COLUMN models TEXT NOT NULL DEFAULT '';
ALTER TABLE relay_users ADD COLUMN expires_at INTEGER;
ALTER TABLE relay_users ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;

-- limits: a cap on a scope ('user:NAME', 'users', 'connection:SLUG', 'pool:POOL'). measure is
-- requests, tokens, usd (capacity in millionths of a USD) or concurrency (period NULL). The id is
-- stable: a new capacity keeps what its counters hold.
CREATE TABLE limits (
    id         TEXT    NOT NULL PRIMARY KEY,
    scope      TEXT    NOT NULL,
    measure    TEXT    NOT NULL CHECK (measure IN ('requests', 'tokens', 'usd', 'concurrency')),
    capacity   INTEGER NOT NULL CHECK (capacity >= 0),
    period     TEXT CHECK (period IN ('minute', 'hour', 'day', 'week', 'month')),
    revision   INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

-- What a limit's window holds: per (limit, subject — the user for a 'users' limit, else ''),
-- per window start (engine clock, ms; 0 for concurrency). used = settled; reserved = taken by
-- requests still running. Admission adds to reserved only while used + reserved stays within the
-- capacity (one statement per limit, all limits of a request in one transaction, sorted).
CREATE TABLE limit_counters (
    limit_id     TEXT    NOT NULL,
    subject      TEXT    NOT NULL,
    window_start INTEGER NOT NULL,
    used         INTEGER NOT NULL DEFAULT 0,
    reserved     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (limit_id, subject, window_start)
);

-- Concurrency slots: one row per request in flight (owner = the relay process, holder = the
-- request), renewed by its owner while it runs; a slot past expires_ms is free again.
CREATE TABLE limit_leases (
    limit_id   TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    holder     TEXT    NOT NULL,
    expires_ms INTEGER NOT NULL,
    PRIMARY KEY (limit_id, subject, owner, holder)
);
CREATE INDEX limit_leases_owner ON limit_leases (owner);

-- audit: every admin change (users, scopes, limits). actor: 'cli:<os user>', 'desktop', or
-- 'user:<name>' (an admin token's user). Never a secret: names, ids, revisions, a JSON summary.
CREATE TABLE audit (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms           INTEGER NOT NULL,
    actor           TEXT    NOT NULL,
    action          TEXT    NOT NULL,
    subject         TEXT    NOT NULL,
    revision_before INTEGER,
    revision_after  INTEGER,
    detail          TEXT
);
CREATE INDEX audit_at ON audit (at_ms);

-- The limit a refusal names (attempt rows of limit refusals; NULL otherwise), and the index the
-- desktop's cap alerts count a window's refusals through.
ALTER TABLE attempts ADD COLUMN limit_id TEXT;
CREATE INDEX attempts_limit ON attempts (limit_id, at_ms) WHERE limit_id IS NOT NULL;
