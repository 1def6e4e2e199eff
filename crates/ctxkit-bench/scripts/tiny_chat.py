#!/usr/bin/env python3
"""Peak memory of `ctxkit chat` on one session (docs/benchmarks.md, "Every command at 10^6
entries"): in tmux (100×30), `ctxkit chat --session COPY` against a loopback Chat Completions mock
with a 200k-token window (a session of a million messages is compacted before the prompt is sent,
the summary asked of the same mock); waits for the banner, sends one prompt, waits for the answer,
quits with Ctrl-D. The chat runs under `/usr/bin/time` with its address space capped at CAP bytes
(default 3 GiB). Prints each step's time, the model's requests and the peak RSS.
Usage: tiny_chat.py CTXKIT SESSION"""
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from serve_harness import answer_chat_chunk

binary, session = os.path.abspath(sys.argv[1]), sys.argv[2]
cap = os.environ.get("CAP", "3221225472")
requests = []
ANSWER = "the-answer-is-here"


class Model(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        request = json.loads(body)
        requests.append((len(body), len(request.get("messages", []))))
        delta = {"role": "assistant", "content": ANSWER if request.get("tools") else "## Goal\nsummary"}
        answer_chat_chunk(self, delta, "stop")

    def log_message(self, *args):
        pass


model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Model)
threading.Thread(target=model.serve_forever, daemon=True).start()
work = tempfile.mkdtemp()
home, project = os.path.join(work, "home"), os.path.join(work, "project")
os.makedirs(home)
os.makedirs(project)
copy = os.path.join(work, "copy.jsonl")
shutil.copy(session, copy)
with open(os.path.join(home, "settings.json"), "w") as file:
    json.dump({"defaultProvider": "mock", "defaultModel": "mock/coder", "retry": {"enabled": False},
               "llm": {"api": "openai-completions", "apiKey": "mock-key",
                       "baseUrl": f"http://127.0.0.1:{model.server_address[1]}/v1",
                       "models": [{"provider": "mock", "id": "coder", "contextWindow": 200_000,
                                   "maxOutput": 2048}]}}, file)
timing = os.path.join(work, "time")
socket = f"tiny-chat-{os.getpid()}"


def tmux(*args):
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True).stdout


def wait_for(needle, limit):
    started = time.monotonic()
    while time.monotonic() - started < limit:
        screen = tmux("capture-pane", "-p", "-t", "chat")
        if needle in screen:
            return time.monotonic() - started
        if not os.path.exists(timing + ".running"):
            break
        time.sleep(0.2)
    print(f"gave up waiting for {needle!r}; the screen:\n{tmux('capture-pane', '-p', '-t', 'chat')}")
    return None


command = (f"touch {timing}.running; cd {project} && HOME={home} CTXKIT_HOME={home} /usr/bin/time -f '%M %e' "
           f"-o {timing} prlimit --as={cap} {binary} chat --session {copy} 2>{work}/err; rm -f {timing}.running; sleep 600")
tmux("new-session", "-d", "-s", "chat", "-x", "100", "-y", "30", command)
time.sleep(0.5)
print(f"banner after {wait_for('Ctrl-D quits', 1800)} s")
tmux("send-keys", "-t", "chat", "-l", "prompt: say the answer")
tmux("send-keys", "-t", "chat", "Enter")
print(f"answer after {wait_for(ANSWER, 1800)} s")
tmux("send-keys", "-t", "chat", "C-d")
quit_started = time.monotonic()
while os.path.exists(timing + ".running") and time.monotonic() - quit_started < 900:
    time.sleep(0.5)
    if int(time.monotonic() - quit_started) % 30 == 0:
        tmux("send-keys", "-t", "chat", "C-d")
print(f"quit after {time.monotonic() - quit_started:.1f} s; the screen:")
print("\n".join(line for line in tmux("capture-pane", "-p", "-t", "chat").splitlines()[-8:] if line.strip()))
tmux("kill-server")
with open(timing) as file:
    lines = file.read().strip().splitlines()
print(f"model requests (bytes, messages): {requests}")
print(f"time: {lines}")
kib = int(lines[-1].split()[0]) if lines and lines[-1].split()[0].isdigit() else 0
print(f"peak RSS: {kib // 1024} MB")
with open(f"{work}/err") as file:
    print("stderr:", file.read()[-int(os.environ.get("SHOW_STDERR", "300")):])
shutil.rmtree(work)
