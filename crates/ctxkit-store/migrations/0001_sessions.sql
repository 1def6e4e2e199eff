-- ctxkit's session store, version 1: one row per session, one row per entry (its JSONL line kept
-- byte for byte), and the writer's lease with its fencing token on the session's row.
CREATE TABLE ctxkit_sessions (
    id              text PRIMARY KEY,
    cwd             text NOT NULL,
    created         text NOT NULL,
    header          text NOT NULL,
    name            text,
    first_message   text,
    message_count   bigint NOT NULL DEFAULT 0,
    entry_count     bigint NOT NULL DEFAULT 0,
    modified_ms     bigint NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    lease_owner     text,
    lease_token     bigint NOT NULL DEFAULT 0,
    lease_expires   timestamptz
);
CREATE INDEX ctxkit_sessions_cwd ON ctxkit_sessions (cwd, modified_ms DESC);
CREATE INDEX ctxkit_sessions_modified ON ctxkit_sessions (modified_ms DESC);

CREATE TABLE ctxkit_entries (
    session_id  text NOT NULL REFERENCES ctxkit_sessions (id) ON DELETE CASCADE,
    seq         bigint NOT NULL,
    entry_id    text,
    parent_id   text,
    kind        text NOT NULL,
    line        text NOT NULL,
    fence       bigint NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX ctxkit_entries_text ON ctxkit_entries USING gin (to_tsvector('simple', line));
