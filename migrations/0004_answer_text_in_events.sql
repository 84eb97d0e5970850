-- A streaming answer's text rides, piece by piece, on the row of the event
-- published right after each piece (`piece_of` names the answer), so a
-- token is one row rather than two. A piece with no event after it in the
-- same transaction still goes to `message_text`, where `after_event` is
-- the event published before it. `messages.text_after`: the last event
-- published when the row was saved; the pieces after it follow
-- `messages.text`.
ALTER TABLE events ADD COLUMN piece_of TEXT;
ALTER TABLE events ADD COLUMN piece TEXT;
ALTER TABLE message_text ADD COLUMN after_event BIGINT;
ALTER TABLE messages ADD COLUMN text_after BIGINT;
