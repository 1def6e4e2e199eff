#!/usr/bin/env python3
"""Issue 42's attack on `ctxkit serve`: COUNT pipelined `message.append` requests of SIZE bytes
each, sent behind an `agent.run` whose model (a loopback Chat Completions mock) answers after
DELAY seconds. Prints the server's peak RSS (VmHWM) and whether every request was answered.

Usage: python3 serve_big_appends.py CTXKIT_BINARY [COUNT=24] [SIZE=60000000] [DELAY=20]
Loopback only; a temporary home and project, removed at the end."""

import http.server
import json
import os
import sys
import threading
import time

from serve_harness import Serve, answer_chat_chunk

binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 24
size = int(sys.argv[3]) if len(sys.argv) > 3 else 60_000_000
delay = float(sys.argv[4]) if len(sys.argv) > 4 else 20.0


class SlowModel(http.server.BaseHTTPRequestHandler):
    """Chat Completions, streamed: one text chunk after `delay` seconds."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        time.sleep(delay)
        answer_chat_chunk(self, {"role": "assistant", "content": "done"}, "stop")

    def log_message(self, *args):
        pass


serve = Serve(binary, SlowModel)
server, project = serve.process, serve.project
answers = {}


def read_answers():
    for line in server.stdout:
        message = json.loads(line)
        if "id" in message:
            answers[message["id"]] = message


send = serve.send
reader = threading.Thread(target=read_answers, daemon=True)
reader.start()
started = time.time()
send(1, "session.create", {"cwd": project})
send(2, "agent.run", {"text": "a long task"})
text = "x" * size
for index in range(count):
    message = {"role": "user", "content": f"{index} {text}", "timestamp": 1}
    send(100 + index, "message.append", {"message": message})
send(3, "session.info", {})
while 3 not in answers and server.poll() is None:
    time.sleep(0.2)
appended = sum(1 for index in range(count) if "result" in answers.get(100 + index, {}))
run = answers.get(2, {}).get("result", {}).get("outcome")
# Every appended message is read back and counted (the view itself would be COUNT × SIZE).
send(4, "context.usage", {})
while 4 not in answers and server.poll() is None:
    time.sleep(0.2)
usage = answers.get(4, {}).get("result", answers.get(4, {}).get("error"))
elapsed = time.time() - started
serve.stop(5)
session_file = answers.get(3, {}).get("result", {}).get("session_file", "")
file_size = os.path.getsize(session_file) if session_file and os.path.exists(session_file) else 0
serve.remove_home()
print(f"peak RSS {serve.peak_mb} MB; run: {run}; appends answered {appended}/{count}; "
      f"context.usage {json.dumps(usage)[:160]}; session file {file_size // 1_000_000} MB; {elapsed:.0f} s")
