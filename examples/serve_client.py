#!/usr/bin/env python3
"""A minimal agent in Python over `ctxkit serve --stdio`: ctxkit runs the loop (`agent.run`) with
the model configured in ctxkit's settings (`defaultModel`), compacts and recovers overflows; this
script prints what happens. Usage: python3 examples/serve_client.py "your prompt" [more prompts…]"""

import json
import os
import subprocess
import sys

ctxkit = os.environ.get("CTXKIT", "ctxkit")
server = subprocess.Popen([ctxkit, "serve", "--stdio"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
next_id = 0


def call(method, params=None):
    """Sends one request and prints the notifications that arrive before its answer."""
    global next_id
    next_id += 1
    request = {"jsonrpc": "2.0", "id": next_id, "method": method, "params": params or {}}
    server.stdin.write(json.dumps(request) + "\n")
    server.stdin.flush()
    while True:
        message = json.loads(server.stdout.readline())
        if message.get("id") == next_id:
            return message
        params = message.get("params", {})
        kind = params.get("type")
        if message.get("method") == "agent_event" and kind == "reply":
            text = "".join(block.get("text", "") for block in params["message"]["content"]
                           if block.get("type") == "text")
            if text:
                print(text)
        elif message.get("method") == "agent_event" and kind == "tool_start":
            print(f"→ {params['call']['name']} {json.dumps(params['call']['arguments'])}")
        elif message.get("method") == "event" and kind == "compaction_end":
            print(f"[compacted: {params.get('tokens_before')} → {params.get('tokens_after')} tokens"
                  f"{'; retrying' if params.get('will_retry') else ''}]")


call("initialize")
session = call("session.create", {"cwd": os.getcwd()})["result"]
print(f"session: {session['session_file']}")
for prompt in sys.argv[1:] or ["What files are in this directory?"]:
    answer = call("agent.run", {"text": prompt, "approve": "none"})
    outcome = answer.get("result") or answer.get("error")
    print(f"[{prompt!r}: {outcome}]")
call("shutdown")
