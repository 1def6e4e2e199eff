#!/usr/bin/env python3
"""Writes one session of N `message` entries on one branch: a user message "word" and an assistant
reply [{"type":"text","text":"word"}] in turn, without usage (the worst case for counting: no reply
carries usage). Ids are `%08x`. Usage: tiny_entries.py N OUT (docs/benchmarks.md, "Memory per entry")."""
import json
import sys

count, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as file:
    file.write(json.dumps({"type": "session", "version": 3, "id": "tiny-entries",
                           "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/tiny"}, separators=(",", ":")) + "\n")
    for index in range(count):
        if index % 2 == 0:
            message = {"role": "user", "content": "word", "timestamp": 1767225600000 + index}
        else:
            message = {"role": "assistant", "content": [{"type": "text", "text": "word"}],
                       "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                       "stopReason": "stop", "timestamp": 1767225600000 + index}
        file.write(json.dumps({"type": "message", "id": "%08x" % (index + 1),
                               "parentId": "%08x" % index if index else None,
                               "timestamp": "2026-01-01T00:00:00.000Z", "message": message}, separators=(",", ":")) + "\n")
