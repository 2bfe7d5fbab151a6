-- 0007: a session's own model and reasoning effort, chosen in its editor
-- (session/set_config_option); '' follows the daemon's configuration
-- (HEARTH_MODEL, HEARTH_REASONING_EFFORT). The model column is the model
-- the session was created with, or the one chosen since.
ALTER TABLE sessions ADD COLUMN chosen_model TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN chosen_effort TEXT NOT NULL DEFAULT '';
