-- Conversation affinity and prompt-cache usage in the attempt ledger (docs/design.md,
-- invariant 15). `conversation`: the request's conversation key (`x:`/`s:`/`a:` + 32 hex chars
-- of a hash over the connection and the id), never a raw client id. `moved`: set on the first
-- attempt of a turn that moved its warm conversation off an ineligible key, with the cause
-- (`excluded:<exclusion>`, `unavailable` or `removed`). `cache_read_tokens` /
-- `cache_write_tokens`: the prompt-cache counts the provider reported (NULL when it said
-- nothing; OpenAI reports no writes).
ALTER TABLE attempts ADD COLUMN conversation TEXT;
ALTER TABLE attempts ADD COLUMN moved TEXT;
ALTER TABLE attempts ADD COLUMN cache_read_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN cache_write_tokens INTEGER;
