-- 0011: checkpoints. One row a file a turn of a session changed through
-- hearth's file tools: its content before the turn (pre_hash, the sha256
-- of a pre-image kept in the data directory's object store; NULL when the
-- file did not exist) and after it (post_hash; NULL when the turn removed
-- it). The first change of a file in a turn keeps its pre-image; later ones
-- only move post_hash. undone marks the rows an undo put back.
CREATE TABLE checkpoint_files (
	id         INTEGER PRIMARY KEY,
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	turn       INTEGER NOT NULL,
	path       TEXT NOT NULL,
	pre_hash   TEXT,
	pre_mode   INTEGER NOT NULL,
	post_hash  TEXT,
	undone     INTEGER NOT NULL DEFAULT 0,
	created    INTEGER NOT NULL,
	UNIQUE (session_id, turn, path)
);
CREATE INDEX checkpoint_files_session ON checkpoint_files(session_id, undone, id);
