-- Projects, their messages and the session events the reducer folds.
-- Portable SQL: SQLite runs it today, Postgres can run it later.

CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    -- Seconds since the Unix epoch.
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    runtime TEXT NOT NULL
);

CREATE TABLE messages (
    project TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    -- Order within the project.
    position BIGINT NOT NULL,
    role TEXT NOT NULL,
    -- The whole text as the model sent it (artifacts included), or the user's message.
    text TEXT NOT NULL,
    -- For an answer: the user message it answers (what Retry asks again).
    asked TEXT,
    model TEXT,
    -- JSON: prompt, completion and total tokens.
    usage TEXT,
    finish_reason TEXT,
    -- streaming, complete, stopped, interrupted or failed.
    status TEXT NOT NULL,
    -- The reason of an interruption or the error of a failure.
    status_detail TEXT,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (project, id)
);

-- Text of a streaming answer not yet in `messages.text`, piece by piece
-- (appending here costs the piece, not the whole text); folded into
-- `messages.text` when the row is saved whole.
CREATE TABLE message_text (
    project TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    message_id TEXT NOT NULL,
    piece TEXT NOT NULL,
    PRIMARY KEY (project, seq)
);

CREATE TABLE events (
    project TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    -- One SessionEvent as JSON.
    event TEXT NOT NULL,
    PRIMARY KEY (project, seq)
);
