-- 0005: a spare session is made and warmed ahead of time in each workspace
-- the daemon holds, so that session/new hands it out already warm. It is
-- nobody's until taken (spare = 0); the ones left by a daemon that stopped
-- are deleted when the next one starts.
ALTER TABLE sessions ADD COLUMN spare INTEGER NOT NULL DEFAULT 0;
