-- 0003: what each response cost, from its `usage` object: input tokens (of
-- which cached: served from the server's prompt cache), output tokens (of
-- which reasoning). Zero for requests that reported none.
ALTER TABLE requests ADD COLUMN input_tokens     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN cached_tokens    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN output_tokens    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
