-- Subscription windows (issue 28, docs/design.md invariant 23): the overall window's
-- representative claim (which window binds the account now, e.g. 'five_hour'), and the first
-- reading of the last hour of each window (seen at, utilization) — the base of the forecast
-- "when does this window run out at the last hour's rate". NULL where unknown; rows written
-- before this migration have neither.
ALTER TABLE quota ADD COLUMN claim TEXT;
ALTER TABLE quota ADD COLUMN base_seen_at_ms INTEGER;
ALTER TABLE quota ADD COLUMN base_utilization REAL;
