-- The latest quota reading per profile, limit window and model, taken from the provider's
-- limit headers (docs/design.md, invariant 18). `model` is '' when the provider scopes the
-- window to the whole account. NULL where the provider said nothing readable: unknown, never
-- guessed. `seen_at_ms` is when the answer carrying it arrived, so a restart shows the last
-- known state with its age. Written in batches off the request path; a reading never
-- replaces a newer one. Rows go with their profile.
CREATE TABLE quota (
    profile_id     TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    model          TEXT NOT NULL DEFAULT '',
    limit_value    INTEGER,
    remaining      INTEGER,
    utilization    REAL,
    resets_at_ms   INTEGER,
    status         TEXT,
    window_minutes INTEGER,
    seen_at_ms     INTEGER NOT NULL,
    PRIMARY KEY (profile_id, name, model)
);
