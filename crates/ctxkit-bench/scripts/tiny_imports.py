#!/usr/bin/env python3
"""The session of tiny_entries.py (N one-word messages, a user "word" and an assistant reply "word"
in turn) as the three agents `ctxkit import` reads write it: a Claude Code transcript
(`claude.jsonl`), a Codex rollout (`rollout.jsonl`) and an OpenCode database of the newer model
(`opencode.db`, `session_v2` and `session_message` rows), shaped as the importer's fixtures are
(crates/ctxkit-import/tests/fixtures). Usage: tiny_imports.py N DIRECTORY (docs/benchmarks.md,
"Every command at 10^6 entries")."""
import json
import os
import sqlite3
import sys

count, directory = int(sys.argv[1]), sys.argv[2]
os.makedirs(directory, exist_ok=True)
compact = {"separators": (",", ":")}
session_id = "7a1b2c3d-0000-4000-8000-000000000001"
cwd = "/tmp/tiny"


def stamp(index):
    """An ISO time a millisecond after the one before."""
    seconds, millis = divmod(index, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"2026-01-{1 + days:02d}T{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}Z"


def uuid(index):
    return f"00000000-0000-4000-8000-{index:012x}"


with open(os.path.join(directory, "claude.jsonl"), "w") as file:
    for index in range(count):
        line = {"parentUuid": uuid(index) if index else None, "isSidechain": False,
                "userType": "external", "cwd": cwd, "sessionId": session_id, "version": "1.0.80",
                "gitBranch": "main", "uuid": uuid(index + 1), "timestamp": stamp(index)}
        if index % 2 == 0:
            line.update(type="user", message={"role": "user", "content": "word"})
        else:
            line.update(type="assistant", message={
                "id": f"msg_{index}", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "word"}],
                "stop_reason": "end_turn"})
        file.write(json.dumps(line, **compact) + "\n")

with open(os.path.join(directory, "rollout.jsonl"), "w") as file:
    file.write(json.dumps({"timestamp": stamp(0), "type": "session_meta", "payload": {
        "id": session_id, "timestamp": stamp(0), "cwd": cwd, "originator": "codex_cli_rs",
        "cli_version": "0.46.0", "instructions": None, "model_provider": "openai"}}, **compact) + "\n")
    for index in range(count):
        if index % 2 == 0:
            payload = {"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "word"}]}
        else:
            payload = {"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": "word"}]}
        file.write(json.dumps({"timestamp": stamp(index), "type": "response_item",
                               "payload": payload}, **compact) + "\n")

database = os.path.join(directory, "opencode.db")
if os.path.exists(database):
    os.remove(database)
connection = sqlite3.connect(database)
connection.executescript("""
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL);
CREATE TABLE session_v2 (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT,
  parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT,
  version TEXT NOT NULL, revert TEXT, agent TEXT, model TEXT, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL);
CREATE TABLE session_message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, type TEXT NOT NULL,
  seq INTEGER NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  data TEXT NOT NULL);
CREATE UNIQUE INDEX session_message_session_seq_idx ON session_message (session_id, seq);
""")
start = 1780000000000
connection.execute("INSERT INTO project VALUES ('p1', ?, ?, ?)", (cwd, start, start))
connection.execute(
    "INSERT INTO session_v2 (id, project_id, parent_id, slug, directory, title, version, agent, "
    "time_created, time_updated) VALUES ('ses_tiny', 'p1', NULL, 'tiny', ?, 'tiny entries', "
    "'2.0.15', 'build', ?, ?)", (cwd, start, start + count))


def rows():
    model = {"id": "claude-sonnet-4-5", "providerID": "anthropic"}
    for index in range(count):
        time = start + index
        if index % 2 == 0:
            kind, data = "user", {"text": "word", "time": {"created": time}}
        else:
            kind, data = "assistant", {"agent": "build", "model": model,
                                       "content": [{"type": "text", "text": "word"}],
                                       "finish": "stop", "time": {"created": time, "completed": time}}
        yield (f"msg_{index:012x}", "ses_tiny", kind, index + 1, time, time, json.dumps(data, **compact))


connection.executemany("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)", rows())
connection.commit()
connection.close()
