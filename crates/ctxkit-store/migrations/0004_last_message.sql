-- A session's last user or assistant message's time, beside `modified_ms` (the later of that and the
-- header's time, the listing's order). `ctxkit sessions` shows a session's last activity, as the
-- file listing and Pi do: a fork made today of an old session shows its messages' time, and says it
-- was created later. Rows written before this column stay NULL until their next message, and show
-- `modified_ms` as they did.
ALTER TABLE ctxkit_sessions ADD COLUMN IF NOT EXISTS last_message_ms bigint;
