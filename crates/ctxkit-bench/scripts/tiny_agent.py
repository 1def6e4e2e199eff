#!/usr/bin/env python3
"""Peak memory of an agent turn on one session over `ctxkit serve --stdio` (docs/benchmarks.md,
"Every command at 10^6 entries"): `session.open` of a fresh copy, then `agent.run` against a
loopback Chat Completions mock (a 200k-token window, so a session of a million messages is
compacted first, the summary asked of the same mock): the mock's first answer to the prompt calls
`recall` (REFERENCE: `ctxkit://summarized` with the query `word`, or a tool call id), its next
answer is text. Each request's size and the server's peak RSS (`VmHWM`).
Usage: tiny_agent.py CTXKIT SESSION [REFERENCE]"""
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading
import time

from serve_harness import Serve, answer_chat_chunk

binary, session = os.path.abspath(sys.argv[1]), sys.argv[2]
# The server's address space is capped at CAP bytes (default 3 GiB): a wrapper that execs it under
# `prlimit` (same process, so its peak is the server's).
wrapper = tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False)
wrapper.write(f'#!/bin/sh\nexec prlimit --as={os.environ.get("CAP", "3221225472")} {binary} "$@"\n')
wrapper.close()
os.chmod(wrapper.name, 0o755)
reference = sys.argv[3] if len(sys.argv) > 3 else "ctxkit://summarized"
requests = []


class Model(http.server.BaseHTTPRequestHandler):
    """Chat Completions, streamed: a `recall` call when the last message is the prompt, else text."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        request = json.loads(body)
        messages = request.get("messages", [])
        last = messages[-1] if messages else {}
        requests.append((len(body), len(messages)))
        if request.get("tools") and last.get("role") == "user" and "prompt" in str(last.get("content")):
            arguments = {"reference": reference}
            if reference.startswith("ctxkit://summarized"):
                arguments["query"] = "word"
            delta = {"role": "assistant", "tool_calls": [{"index": 0, "id": "call_recall", "type": "function",
                     "function": {"name": "recall", "arguments": json.dumps(arguments)}}]}
            finish = "tool_calls"
        else:
            delta, finish = {"role": "assistant", "content": "done"}, "stop"
        answer_chat_chunk(self, delta, finish)

    def log_message(self, *args):
        pass


serve = Serve(wrapper.name, Model, {"models": [{"provider": "mock", "id": "coder", "contextWindow": 200_000,
                                          "maxOutput": 2048}]})
copy = os.path.join(serve.project, "copy.jsonl")
shutil.copy(session, copy)
answers = {}
events = []


def read_answers():
    for line in serve.process.stdout:
        message = json.loads(line)
        if "id" in message:
            answers[message["id"]] = message
        else:
            events.append(message.get("method"))


threading.Thread(target=read_answers, daemon=True).start()


def call(identifier, method, params):
    started = time.monotonic()
    serve.send(identifier, method, params)
    while identifier not in answers and serve.process.poll() is None:
        time.sleep(0.1)
    answer = answers.get(identifier, {"error": "the server ended"})
    shown = json.dumps(answer.get("result", answer.get("error")))[:200]
    print(f"| `{method}` | {time.monotonic() - started:.1f} s | {shown} |")


print("| request | time | answer |")
print("|---|---:|---|")
call(1, "session.open", {"path": copy})
call(2, "agent.run", {"text": "prompt: find the word", "approve": "all"})
ended = serve.process.poll()
if ended is None:
    serve.stop(3)
else:
    serve._done.set()
    print(f"\nthe server ended: status {ended}")
print(f"\nmodel requests (bytes, messages): {requests}")
print(f"peak RSS: {serve.peak_mb} MB")
serve.remove_home()
os.remove(wrapper.name)
