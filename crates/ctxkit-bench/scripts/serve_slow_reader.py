#!/usr/bin/env python3
"""Issue 42's attack on `ctxkit serve`'s outgoing side: a client that reads nothing while a run
streams. A loopback Chat Completions mock streams PIECES text chunks of SIZE bytes; the client
sends RUNS `agent.run` (pipelined), reads nothing for PAUSE seconds, then reads everything. Prints the server's peak
RSS (VmHWM), the bytes of deltas the client got, and the `deltas_dropped` count.

Usage: python3 serve_slow_reader.py CTXKIT_BINARY [PIECES=6000] [SIZE=10000] [PAUSE=30] [RUNS=1] [MAX_REPLY]
(MAX_REPLY sets `llm.maxReplyBytes`, 64 MiB by default, for a stream longer than that)"""

import http.server
import json
import sys
import time

from serve_harness import Serve

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


serve = Serve(binary, StreamingModel, {"maxReplyBytes": max_reply} if max_reply else None)
server, project, send = serve.process, serve.project, serve.send

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
serve.stop(3)
serve.remove_home()
print(f"peak RSS {serve.peak_mb} MB; streamed {runs} × {pieces * size // 1_000_000} MB; deltas read "
      f"{delta_bytes // 1_000_000} MB; deltas_dropped {dropped}; run: {json.dumps(outcome)[:120]}")
