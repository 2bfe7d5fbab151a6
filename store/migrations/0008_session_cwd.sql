-- 0008: a session's working directory. The workspace is the repository (git)
-- root containing the directory a session was opened in; that directory is
-- the session's cwd: where the model's relative paths start and its
-- commands run, and what session/list filters by. Sessions stored before
-- were opened at their workspace's root.
ALTER TABLE sessions ADD COLUMN cwd TEXT NOT NULL DEFAULT '';
UPDATE sessions SET cwd = (SELECT root FROM workspaces WHERE workspaces.id = sessions.workspace_id);
