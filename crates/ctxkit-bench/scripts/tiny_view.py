#!/usr/bin/env python3
"""Peak memory of `ctxkit view` on one session (docs/benchmarks.md, "Every command at 10^6
entries"): the server started on a fresh copy (its address space capped at CAP bytes, default
3 GiB), then the page (`/`), the data (`/api/data`) and the context at the leaf (`/api/context`)
fetched one after another as a browser would; each answer's status, size and time, then the
server's peak RSS (`VmHWM`). CONTEXT_AT: the entry whose context is asked for instead of the leaf.
Usage: tiny_view.py CTXKIT SESSION"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

binary, session = sys.argv[1], sys.argv[2]
cap = os.environ.get("CAP", "3221225472")
work = tempfile.mkdtemp()
copy = os.path.join(work, "copy.jsonl")
shutil.copy(session, copy)
home = os.path.join(work, "home")
os.makedirs(home)
with open(copy, "rb") as file:
    file.seek(max(0, os.path.getsize(copy) - 4096))
    leaf = json.loads(file.read().splitlines()[-1])["id"]
leaf = os.environ.get("CONTEXT_AT", leaf)
env = dict(os.environ, CTXKIT_HOME=home, CTXKIT_OFFLINE="1")
server = subprocess.Popen(["prlimit", f"--as={cap}", binary, "view", copy], cwd=work, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
url = server.stdout.readline().decode().strip()
base, query = url.split("?", 1)
peak_kib = 0


def watch():
    global peak_kib
    try:
        with open(f"/proc/{server.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    peak_kib = max(peak_kib, int(line.split()[1]))
    except OSError:
        pass


def watch_until_the_end():
    while server.poll() is None:
        watch()
        time.sleep(0.2)


threading.Thread(target=watch_until_the_end, daemon=True).start()


def fetch(path, extra=""):
    started = time.monotonic()
    try:
        with urllib.request.urlopen(f"{base.rstrip('/')}{path}?{query}{extra}", timeout=1800) as answer:
            body, status = answer.read(), answer.status
    except urllib.error.HTTPError as error:
        body, status = error.read(), error.code
    except (urllib.error.URLError, ConnectionError) as error:
        body, status = str(error).encode(), "failed"
    watch()
    shown = body[:160].decode(errors="replace") if status != 200 else ""
    print(f"| `{path}` | {status} | {len(body):,} bytes | {time.monotonic() - started:.1f} s | {shown} |")


print("| request | status | answer | time | note |")
print("|---|---|---:|---:|---|")
fetch("/")
fetch("/api/data")
fetch("/api/context", f"&id={leaf}")
watch()
ended = server.poll()
server.terminate()
server.wait()
state = "" if ended is None else f" (the server had ended: status {ended})"
print(f"\npeak RSS: {peak_kib // 1024} MB{state}")
shutil.rmtree(work)
