-- 0012: checkpoint upkeep. pre_size and post_size are the sizes of the
-- objects a row keeps (0 for none): the pre-image, and what the turn left
-- (for the diff of a conflict); a workspace's budget counts them. The hash
-- indexes tell whether any row still needs an object. checkpoint_trims keeps, per
-- session, the newest checkpoint key dropped to keep its workspace within
-- the budget, so that an undo or rewind past it can say so. session_notes
-- are what an undo or a rewind must tell the model before its next
-- request: kept until a prompt's input holds them, whatever kills hearth.
ALTER TABLE checkpoint_files ADD COLUMN pre_size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE checkpoint_files ADD COLUMN post_size INTEGER NOT NULL DEFAULT 0;
CREATE INDEX checkpoint_files_hash ON checkpoint_files(pre_hash);
CREATE INDEX checkpoint_files_post ON checkpoint_files(post_hash);
CREATE TABLE checkpoint_trims (
	session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
	through    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE session_notes (
	id         INTEGER PRIMARY KEY,
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	note       TEXT NOT NULL,
	created    INTEGER NOT NULL
);
CREATE INDEX session_notes_session ON session_notes(session_id, id);
