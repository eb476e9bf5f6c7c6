-- The client's session an attempt belongs to (Claude Code / Codex session ids), hashed with
-- the connection: the UI groups a session's turns by it. Never the raw id.
ALTER TABLE attempts ADD COLUMN session TEXT;
