-- Checkpoints: commits of the project's files in the repository Rivet keeps
-- for the project (`<data_dir>/projects/<id>/checkpoints.git`).
-- Portable SQL: SQLite runs it today, Postgres can run it later.

CREATE TABLE checkpoints (
    project TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    -- Order within the project.
    seq BIGINT NOT NULL,
    -- answer (after an answer and its actions), before_fix, edits (the
    -- person's own changes), before_restore, before_redo.
    kind TEXT NOT NULL,
    -- The assistant message the files are as of: the answer (answer,
    -- before_fix), the latest answer then (edits), or the answer restored
    -- to (before_restore, which Redo goes back to).
    message_id TEXT,
    -- The commit in the checkpoint repository.
    commit_id TEXT NOT NULL,
    -- before_restore: the messages the restore marked undone, as a JSON
    -- array of ids (what Redo gives back).
    undone TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (project, seq)
);

CREATE INDEX checkpoints_by_message ON checkpoints (project, message_id);
