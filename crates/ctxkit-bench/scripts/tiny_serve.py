#!/usr/bin/env python3
"""Peak memory of `ctxkit serve --stdio` on one session (docs/benchmarks.md, "Every command"): on a
fresh copy, `session.open`, `model.set` (a 200k window), `view.get`, `compact` (the offline summary:
`CTXKIT_OFFLINE=1`, no provider), `view.get` again, `shutdown`; each answer's time and size, then the
server's peak RSS (`VmHWM`). STEPS (comma-separated) replaces the requests between `model.set` and
`shutdown`: `STEPS=view.get` on a session compacted beforehand (`ctxkit compact`) measures the view
after a compaction; the step `transcript.pages` reads the whole branch with `transcript.get`, a page
of 100,000 messages at a time; `check.before_prompt` is the check an agent runs before its prompt.
Usage: tiny_serve.py CTXKIT SESSION"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

binary, session = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp()
copy = os.path.join(work, "copy.jsonl")
shutil.copy(session, copy)
home = os.path.join(work, "home")
os.makedirs(home)
env = dict(os.environ, CTXKIT_HOME=home, CTXKIT_OFFLINE="1")
server = subprocess.Popen([binary, "serve", "--stdio"], cwd=work, env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
# Read after each answer: the peak so far (`VmHWM`) and what the server holds then (`VmRSS`).
peak_kib = 0
resident_kib = 0


def watch():
    global peak_kib, resident_kib
    try:
        with open(f"/proc/{server.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    peak_kib = max(peak_kib, int(line.split()[1]))
                if line.startswith("VmRSS:"):
                    resident_kib = int(line.split()[1])
    except OSError:
        pass


def call(identifier, method, params):
    request = {"jsonrpc": "2.0", "id": identifier, "method": method, "params": params}
    started = time.monotonic()
    server.stdin.write(json.dumps(request).encode() + b"\n")
    server.stdin.flush()
    while True:
        line = server.stdout.readline()
        if not line:
            raise SystemExit(f"{method}: the server ended")
        answer = json.loads(line)
        if answer.get("id") == identifier:
            watch()
            status = "error " + json.dumps(answer["error"])[:160] if "error" in answer else "ok"
            print(f"| `{method}` | {time.monotonic() - started:.1f} s | {len(line):,} bytes | "
                  f"{resident_kib // 1024} MB | {peak_kib // 1024} MB | {status} |")
            return answer


print("| request | time | answer | RSS after | peak RSS so far | result |")
print("|---|---:|---:|---:|---:|---|")
call(1, "session.open", {"path": copy})
call(2, "model.set", {"model": {"provider": "anthropic", "id": "claude-sonnet-4-5",
                                "context_window": 200000}})
steps = os.environ.get("STEPS", "view.get,compact,view.get").split(",")
number = 2
for method in steps:
    number += 1
    if method != "transcript.pages":
        call(number, method, {})
        continue
    offset, total = 0, None
    while total is None or offset < total:
        answer = call(number, "transcript.get", {"offset": offset, "limit": 100000})
        total = answer.get("result", {}).get("total", 0)
        offset += 100000
        number += 1
call(number + 1, "shutdown", {})
server.stdin.close()
server.wait()
print(f"\npeak RSS: {peak_kib // 1024} MB")
shutil.rmtree(work)
