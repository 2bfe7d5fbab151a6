-- 0006: compactions. When a session outgrows the model's context window its
-- older items are replaced, in the model's view only, by a summary: the view
-- is the session's initial items, the latest summary, then every item after
-- through_seq. The items themselves stay (inspect and session/load show the
-- whole history).
CREATE TABLE compactions (
	id          INTEGER PRIMARY KEY,
	session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	through_seq INTEGER NOT NULL, -- the last item the summary replaces
	summary     TEXT NOT NULL,
	response_id TEXT NOT NULL DEFAULT '', -- the response that wrote the summary
	reason      TEXT NOT NULL DEFAULT '', -- why: the window's threshold, the server's refusal, the user
	created     INTEGER NOT NULL
);
CREATE INDEX compactions_session ON compactions(session_id, id);
