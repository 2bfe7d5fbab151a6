-- What the model last saw of each file it read or wrote (the context delta
-- diffs against it), and the permission decisions a user made "always" for a
-- session.
ALTER TABLE read_set ADD COLUMN content BLOB;

CREATE TABLE permissions (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	tool       TEXT NOT NULL,
	decision   TEXT NOT NULL CHECK (decision IN ('allow', 'reject')),
	updated    INTEGER NOT NULL,
	PRIMARY KEY (session_id, tool)
);
