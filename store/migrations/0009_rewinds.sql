-- 0009: rewinds. A rewind moves a session's model view back to before a
-- turn: the items from from_seq through through_seq (the session's last
-- item when it was rewound) leave the view, and stay in the store (inspect
-- and session/load show the whole history). Items appended after a rewind
-- are numbered after through_seq, so the ranges never overlap them.
CREATE TABLE rewinds (
	id          INTEGER PRIMARY KEY,
	session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	from_seq    INTEGER NOT NULL,
	through_seq INTEGER NOT NULL,
	created     INTEGER NOT NULL
);
CREATE INDEX rewinds_session ON rewinds(session_id, id);
