-- The CLI backend (docs/design.md, "The CLI backend"): what the official Claude Code CLI
-- reported an attempt's tokens would cost at list price (its `total_cost_usd`), in millionths
-- of a USD. A reference figure only: a subscription is not billed per token, so usage and cost
-- reports never add it to a cost. NULL for every attempt the CLI did not serve.
ALTER TABLE attempts ADD COLUMN reference_cost_micro_usd INTEGER;
