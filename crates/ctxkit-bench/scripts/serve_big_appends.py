#!/usr/bin/env python3
"""Issue 42's attack on `ctxkit serve`: COUNT pipelined `message.append` requests of SIZE bytes
each, sent behind an `agent.run` whose model (a loopback Chat Completions mock) answers after
DELAY seconds. Prints the server's peak RSS (VmHWM) and whether every request was answered.

Usage: python3 serve_big_appends.py CTXKIT_BINARY [COUNT=24] [SIZE=60000000] [DELAY=20]
Loopback only; a temporary home and project, removed at the end."""

import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 24
size = int(sys.argv[3]) if len(sys.argv) > 3 else 60_000_000
delay = float(sys.argv[4]) if len(sys.argv) > 4 else 20.0


class SlowModel(http.server.BaseHTTPRequestHandler):
    """Chat Completions, streamed: one text chunk after `delay` seconds."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        time.sleep(delay)
        chunk = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "done"},
                              "finish_reason": "stop"}]}
        body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowModel)
threading.Thread(target=model.serve_forever, daemon=True).start()
home = tempfile.mkdtemp()
project = os.path.join(home, "project")
os.makedirs(project)
settings = {"defaultProvider": "mock", "defaultModel": "mock/coder",
            "llm": {"api": "openai-completions", "apiKey": "mock-key",
                    "baseUrl": f"http://127.0.0.1:{model.server_address[1]}/v1",
                    "models": [{"provider": "mock", "id": "coder", "contextWindow": 400_000_000,
                                "maxOutput": 2048}]}}
with open(os.path.join(home, "settings.json"), "w") as file:
    json.dump(settings, file)
env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
env.update({"CTXKIT_HOME": home})
server = subprocess.Popen([binary, "serve", "--stdio"], cwd=project, env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
peak = [0]
done = threading.Event()


def watch_memory():
    while not done.is_set():
        try:
            with open(f"/proc/{server.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]) // 1024)
        except OSError:
            return
        time.sleep(0.2)


threading.Thread(target=watch_memory, daemon=True).start()
answers = {}


def read_answers():
    for line in server.stdout:
        message = json.loads(line)
        if "id" in message:
            answers[message["id"]] = message


def send(identifier, method, params):
    request = {"jsonrpc": "2.0", "id": identifier, "method": method, "params": params}
    server.stdin.write(json.dumps(request).encode() + b"\n")
    server.stdin.flush()


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
send(5, "shutdown", {})
server.stdin.close()
server.wait()
done.set()
session_file = answers.get(3, {}).get("result", {}).get("session_file", "")
file_size = os.path.getsize(session_file) if session_file and os.path.exists(session_file) else 0
shutil.rmtree(home)
print(f"peak RSS {peak[0]} MB; run: {run}; appends answered {appended}/{count}; "
      f"context.usage {json.dumps(usage)[:160]}; session file {file_size // 1_000_000} MB; {elapsed:.0f} s")
