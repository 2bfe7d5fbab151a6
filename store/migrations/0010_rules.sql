-- 0010: rules. A user's "always allow" kept for a workspace across sessions
-- and restarts: a command prefix ("go test") whose commands run without
-- asking (in the mode's sandbox, never a wider one), or a workspace-relative
-- path the file tools may change without asking.
CREATE TABLE rules (
	id           INTEGER PRIMARY KEY,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	kind         TEXT NOT NULL CHECK (kind IN ('command', 'path')),
	pattern      TEXT NOT NULL,
	created      INTEGER NOT NULL,
	UNIQUE (workspace_id, kind, pattern)
);
