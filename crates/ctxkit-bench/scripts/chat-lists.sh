#!/bin/bash
# How long `ctxkit chat`'s full-screen lists take to appear on a large session, in tmux (100×24):
# `/tree` (the interactive tree), `/tree --list` (the printed tree, the baseline) and Esc twice (the
# rewind's prompt list). Usage: chat-lists.sh CTXKIT SESSION_FILE [RUNS]
# The session is opened with `--session`; no model request is sent (settings point at a dead port).
set -euo pipefail
ctxkit=$1
session=$(realpath "$2")
runs=${3:-3}
work=$(mktemp -d)
trap 'tmux -L ctxkit-lists kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/project"
cat > "$work/home/settings.json" <<JSON
{"defaultProvider":"mock","defaultModel":"mock/m","retry":{"enabled":false},
 "llm":{"api":"openai-completions","baseUrl":"http://127.0.0.1:9/v1",
        "models":[{"provider":"mock","id":"m","contextWindow":100000,"maxOutput":2048}]}}
JSON
# A copy: the chat may append (labels, nothing here) and holds a lock on the file.
cp "$session" "$work/session.jsonl"
entries=$(($(wc -l < "$work/session.jsonl") - 1))
tmux_() { tmux -L ctxkit-lists "$@"; }
measure() { # TEXT KEY NEEDLE: types TEXT (may be empty), presses KEY, waits for NEEDLE
  local text=$1 key=$2 needle=$3
  tmux_ kill-server 2>/dev/null || true
  sleep 0.3
  tmux_ new-session -d -s l -x 100 -y 24 "cd '$work/project' && HOME='$work/home' CTXKIT_HOME='$work/home' '$ctxkit' chat --session '$work/session.jsonl'"
  # The banner's last line, then the input line.
  for _ in $(seq 1 600); do tmux_ capture-pane -p -t l | grep -q 'Ctrl-D quits' && break; sleep 0.1; done
  sleep 0.5
  if [ -n "$text" ]; then tmux_ send-keys -t l -l "$text"; fi
  # Keys go one at a time, 120 ms apart as a hand presses them (two Esc bytes in one read are the
  # start of an Alt sequence to the line editor: one Esc in all); the clock starts at the last.
  local keys=($key) start end index
  for index in "${!keys[@]}"; do
    if [ "$index" -gt 0 ]; then sleep 0.12; fi
    start=$(date +%s%N)
    tmux_ send-keys -t l "${keys[$index]}"
  done
  for _ in $(seq 1 3000); do tmux_ capture-pane -p -t l | grep -qF -- "$needle" && break; sleep 0.02; done
  end=$(date +%s%N)
  echo $(((end - start) / 1000000))
}
echo "session: $entries entries"
for run in $(seq 1 "$runs"); do
  tree=$(measure /tree Enter "Session tree  (")
  list=$(measure "/tree --list" Enter "← leaf")
  rewind=$(measure "" "Escape Escape" "Rewind to before which prompt?")
  echo "run $run: /tree ${tree} ms · /tree --list ${list} ms · Esc Esc ${rewind} ms"
done
