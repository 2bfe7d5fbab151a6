-- 0001: the initial schema.
--
-- Secrets never enter this database: the API key lives only in the
-- daemon's memory and its configuration, and no table has a column for it.
--
-- Times are INTEGER unix nanoseconds (UTC). A NULL time means "not yet".

CREATE TABLE workspaces (
	id      INTEGER PRIMARY KEY,
	root    TEXT NOT NULL UNIQUE,   -- absolute, as canonicalised by the daemon
	created INTEGER NOT NULL
);

CREATE TABLE sessions (
	id           TEXT PRIMARY KEY,  -- chosen by the daemon
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
	mode         TEXT NOT NULL DEFAULT '',
	model        TEXT NOT NULL DEFAULT '',
	title        TEXT NOT NULL DEFAULT '',
	created      INTEGER NOT NULL,
	updated      INTEGER NOT NULL
);
CREATE INDEX sessions_workspace ON sessions(workspace_id);

CREATE TABLE turns (
	id          INTEGER PRIMARY KEY,
	session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,   -- 1-based within the session
	status      TEXT NOT NULL
	            CHECK (status IN ('running', 'completed', 'cancelled', 'failed', 'interrupted')),
	stop_reason TEXT NOT NULL DEFAULT '',
	error       TEXT NOT NULL DEFAULT '',
	started     INTEGER NOT NULL,
	ended       INTEGER,            -- NULL while running
	UNIQUE (session_id, seq)
);
-- Only the few running turns, for InterruptRunning at daemon start.
CREATE INDEX turns_running ON turns(status) WHERE status = 'running';

-- The transcript, exactly as sent to or received from the model.
CREATE TABLE items (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,    -- 1..n within the session, no gaps
	turn_id    INTEGER REFERENCES turns(id) ON DELETE CASCADE, -- NULL: before any turn
	origin     TEXT NOT NULL CHECK (origin IN ('input', 'output')),
	type       TEXT NOT NULL DEFAULT '',  -- copy of the JSON "type" member
	data       TEXT NOT NULL,       -- a JSON object, byte-exact; validated by Go
	created    INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE INDEX items_turn ON items(turn_id);

-- One row per model request.
CREATE TABLE requests (
	id                   INTEGER PRIMARY KEY,
	session_id           TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	turn_id              INTEGER REFERENCES turns(id) ON DELETE CASCADE, -- NULL: warm-up
	conn                 TEXT NOT NULL DEFAULT '',
	kind                 TEXT NOT NULL CHECK (kind IN ('warmup', 'full', 'incremental')),
	full_reason          TEXT NOT NULL DEFAULT '',
	previous_response_id TEXT NOT NULL DEFAULT '',
	response_id          TEXT NOT NULL DEFAULT '',
	bytes_sent           INTEGER NOT NULL DEFAULT 0,
	input_items          INTEGER NOT NULL DEFAULT 0,
	status               TEXT NOT NULL DEFAULT 'sent',
	error                TEXT NOT NULL DEFAULT '',
	sent                 INTEGER,
	first_event          INTEGER,
	finished             INTEGER
);
CREATE INDEX requests_session ON requests(session_id, id);
CREATE INDEX requests_turn ON requests(turn_id);

-- Files the model has seen in a session, with the hash of what it saw.
CREATE TABLE read_set (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	path       TEXT NOT NULL,
	hash       TEXT NOT NULL,
	updated    INTEGER NOT NULL,
	PRIMARY KEY (session_id, path)
) WITHOUT ROWID;
