-- 0004: how an editor showed a tool call's result (title, kind, locations,
-- the diff of an edit), so that session/load shows a resumed session as it
-- was shown live. JSON; NULL for every other item and for older rows.
ALTER TABLE items ADD COLUMN view TEXT;
