#!/usr/bin/env python3
"""Issue 42's attack on `ctxkit serve`'s outgoing side: a client that reads nothing while a run
streams. A loopback Chat Completions mock streams PIECES text chunks of SIZE bytes; the client
sends RUNS `agent.run` (pipelined), reads nothing for PAUSE seconds, then reads everything. Prints the server's peak
RSS (VmHWM), the bytes of deltas the client got, and the `deltas_dropped` count.

Usage: python3 serve_slow_reader.py CTXKIT_BINARY [PIECES=6000] [SIZE=10000] [PAUSE=30] [RUNS=1] [MAX_REPLY]
(MAX_REPLY sets `llm.maxReplyBytes`, 64 MiB by default, for a stream longer than that)"""

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
pieces = int(sys.argv[2]) if len(sys.argv) > 2 else 6_000
size = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
pause = float(sys.argv[4]) if len(sys.argv) > 4 else 30.0
runs = int(sys.argv[5]) if len(sys.argv) > 5 else 1
max_reply = int(sys.argv[6]) if len(sys.argv) > 6 else None


class StreamingModel(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        piece = "x" * size

        def chunk(data):
            body = f"data: {json.dumps(data) if not isinstance(data, str) else data}\n\n".encode()
            self.wfile.write(f"{len(body):x}\r\n".encode() + body + b"\r\n")

        for _ in range(pieces):
            chunk({"choices": [{"index": 0, "delta": {"content": piece}}]})
        chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        chunk("[DONE]")
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *args):
        pass


model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StreamingModel)
threading.Thread(target=model.serve_forever, daemon=True).start()
home = tempfile.mkdtemp()
project = os.path.join(home, "project")
os.makedirs(project)
settings = {"defaultProvider": "mock", "defaultModel": "mock/coder",
            "llm": {"api": "openai-completions", "apiKey": "mock-key",
                    "baseUrl": f"http://127.0.0.1:{model.server_address[1]}/v1",
                    "models": [{"provider": "mock", "id": "coder", "contextWindow": 400_000_000,
                                "maxOutput": 2048}]}}
if max_reply:
    settings["llm"]["maxReplyBytes"] = max_reply
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


def send(identifier, method, params):
    request = {"jsonrpc": "2.0", "id": identifier, "method": method, "params": params}
    server.stdin.write(json.dumps(request).encode() + b"\n")
    server.stdin.flush()


send(1, "session.create", {"cwd": project})
for run in range(runs):
    send(100 + run, "agent.run", {"text": "stream a lot"})
time.sleep(pause)
delta_bytes, dropped, outcome = 0, 0, None
for line in server.stdout:
    message = json.loads(line)
    params = message.get("params", {})
    if params.get("type") == "delta":
        delta_bytes += len(params.get("text", ""))
    elif params.get("type") == "deltas_dropped":
        dropped += params["count"]
    if message.get("id") == 100 + runs - 1:
        outcome = message.get("result", message.get("error"))
        break
send(3, "shutdown", {})
server.stdin.close()
server.wait()
done.set()
shutil.rmtree(home)
print(f"peak RSS {peak[0]} MB; streamed {runs} × {pieces * size // 1_000_000} MB; deltas read "
      f"{delta_bytes // 1_000_000} MB; deltas_dropped {dropped}; run: {json.dumps(outcome)[:120]}")
