#!/usr/bin/env bash
# Peak memory and wall time of every ctxkit command that takes a session file, on one session
# (docs/benchmarks.md, "Memory per entry": 10^6 one-word entries, written by tiny_entries.py).
# Commands that write run on a fresh copy each; each run's address space is capped (CAP, default
# 3 GiB: a command over it fails instead of taking the machine) and its time (LIMIT seconds,
# default 1800: `simulate` of a million entries does not end); ONLY (a regular expression) picks
# commands by name. IMPORTS: a directory written by tiny_imports.py (the same session as Claude
# Code, Codex and OpenCode write it) adds `import` of each. The live view, the chat and serve run
# from their own scripts (tiny_view.py, tiny_chat.py, tiny_agent.py, tiny_serve.py), named here
# too. Usage: tiny_commands.sh CTXKIT SESSION [WORK]
set -euo pipefail
ctxkit="${1:?usage: tiny_commands.sh CTXKIT SESSION [WORK]}"
session="${2:?usage: tiny_commands.sh CTXKIT SESSION [WORK]}"
work="${3:-$(mktemp -d)}"
cap="${CAP:-3221225472}"
limit="${LIMIT:-1800}"
scripts="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$work/home"
export CTXKIT_HOME="$work/home" CTXKIT_OFFLINE=1
middle=$(sed -n "$(( $(wc -l < "$session") / 2 ))p" "$session" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')

measure() {
  local name="$1"; shift
  # ONLY='compact|export --html' runs those commands alone.
  if [[ -n "${ONLY:-}" && ! "$name" =~ ^(${ONLY})$ ]]; then return; fi
  local copy="$work/copy.jsonl"
  cp "$session" "$copy"
  local args=() arg
  for arg in "$@"; do args+=("${arg//SESSION/$copy}"); done
  if /usr/bin/time -f '%M %e' -o "$work/time" timeout "$limit" prlimit --as="$cap" "$ctxkit" "${args[@]}" >"$work/out" 2>"$work/err"; then
    status=ok
  else
    status="exit $? ($(head -c 160 "$work/err" | tr '\n' ' '))"
  fi
  read -r kib seconds < <(tail -n 1 "$work/time")
  printf '| `%s` | %d MB | %s s | %s |\n' "$name" $(( kib / 1024 )) "$seconds" "$status"
}

echo "| command | peak RSS | wall | result |"
echo "|---|---:|---:|---|"
measure "info" info SESSION
measure "tree" tree SESSION
measure "context" context SESSION
measure "context --json" context --json SESSION
measure "tokens" tokens SESSION
measure "compactions" compactions SESSION
measure "check" check SESSION
measure "label" label SESSION "$middle" here
measure "name" name SESSION tiny
measure "edit-context" edit-context SESSION "$middle" --omit
measure "branch" branch SESSION --to "$middle"
measure "fork" fork SESSION --at "$middle"
measure "compact" compact SESSION
measure "export --html" export --html --out "$work/page.html" SESSION
measure "sessions" sessions --dir "$work"
measure "sessions --grep" sessions --dir "$work" --grep word
measure "store import" --store "$work/store" store import SESSION
rm -f "$work/exported.jsonl"
measure "store export" --store "$work/store" store export tiny-entries -o "$work/exported.jsonl"
measure "simulate" simulate --session SESSION
if [[ -n "${IMPORTS:-}" ]]; then
  for source in claude.jsonl rollout.jsonl opencode.db; do
    rm -f "$work/imported.jsonl"
    measure "import $source" import --out "$work/imported.jsonl" "$IMPORTS/$source"
  done
fi

# A script's peak (its last line, `peak RSS: N MB…`) and the requests it made, on one row.
run_script() {
  local name="$1"; shift
  if [[ -n "${ONLY:-}" && ! "$name" =~ ^(${ONLY})$ ]]; then return; fi
  local started=$SECONDS
  CAP="$cap" "$@" >"$work/script" 2>&1 || true
  local peak; peak=$(grep -o 'peak RSS: .*' "$work/script" | tail -n 1 || true)
  local failed; failed=$(grep -E 'failed|ended|gave up' "$work/script" | head -n 1 | cut -c1-120 | tr '|' ' ' || true)
  printf '| `%s` | %s | %s s | %s |\n' "$name" "${peak#peak RSS: }" $(( SECONDS - started )) "${failed:-ok}"
}
run_script "view" python3 "$scripts/tiny_view.py" "$ctxkit" "$session"
run_script "chat" python3 "$scripts/tiny_chat.py" "$ctxkit" "$session"
run_script "serve agent.run (recall summarized)" python3 "$scripts/tiny_agent.py" "$ctxkit" "$session"
run_script "serve agent.run (recall by id)" python3 "$scripts/tiny_agent.py" "$ctxkit" "$session" call_none
if [[ -z "${ONLY:-}" || "serve view.get after compact" =~ ^(${ONLY})$ ]]; then
  cp "$session" "$work/compacted.jsonl"
  CTXKIT_OFFLINE=1 "$ctxkit" compact "$work/compacted.jsonl" >/dev/null 2>&1 || true
  run_script "serve view.get after compact" env STEPS=view.get prlimit --as="$cap" python3 "$scripts/tiny_serve.py" "$ctxkit" "$work/compacted.jsonl"
fi
rm -rf "$work/copy.jsonl" "$work/page.html" "$work/store" "$work/exported.jsonl" "$work/imported.jsonl" "$work/compacted.jsonl"
