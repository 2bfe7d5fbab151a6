-- 0013: checkpoint modes. post_mode is the permission bits a turn left a
-- file (or directory) with; NULL when unknown (rows from before, a file
-- the turn removed or created through the file tools): a row whose
-- content is as it began but whose post_mode differs from pre_mode is a
-- change of mode alone, which an undo puts back. A row whose pre_hash or
-- post_hash is 'directory' is of a directory: present before or after the
-- turn, with its mode.
ALTER TABLE checkpoint_files ADD COLUMN post_mode INTEGER;
