#!/usr/bin/env bash
# Side-by-side benchmark: ctxkit against the reference (Pi's coding agent, 0.73.1 unless PI_VERSION says
# otherwise) on the same generated inputs, in one run, each measurement in a fresh process, the two
# sides taking turns run by run. Prints a markdown table.
#
# Usage: bench/side-by-side/run.sh [--sizes "10000 100000"] [--sessions 1000] [--repeat 3]
#                                  [--reference-max-entries 100000] [--text-bytes 1000000] [--work DIR]
#                                  [--operations "open open-context ..."] [--tokens yes|no]
# Environment: PI_VERSION (0.73.1; 0.87.1 needs Node >= 22: set NODE), NODE (the node binary, `node`),
#              PI_DIR (an installed reference; otherwise pi-op.mjs installs it with npm into $TMPDIR),
#              CARGO_TARGET_DIR (default /tmp/target-bench), OP_TIMEOUT (seconds per measurement, 600).
# Every run also records the load average before it and the whole process's CPU (user + system) and
# wall time from /usr/bin/time.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
sizes="10000 100000"
sessions=1000
repeat=3
reference_max=100000
text_bytes=1000000
work=""
operations="open open-context context context-values prepare tree branch append"
tokens=yes
node_bin="${NODE:-node}"
pi_version="${PI_VERSION:-0.73.1}"
export PI_VERSION="$pi_version"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2 ;;
    --sessions) sessions="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --reference-max-entries) reference_max="$2"; shift 2 ;;
    --text-bytes) text_bytes="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --operations) operations="$2"; shift 2 ;;
    --tokens) tokens="$2"; shift 2 ;;
    *) echo "Unknown argument \`$1\`" >&2; exit 2 ;;
  esac
done
work="${work:-$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-side-by-side.XXXXXX")}"
mkdir -p "$work"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/target-bench}"
op_timeout="${OP_TIMEOUT:-600}"

echo "Building ctxkit-bench (release) into $CARGO_TARGET_DIR" >&2
(cd "$repo" && cargo build --quiet --release -p ctxkit-bench)
gen="$CARGO_TARGET_DIR/release/ctxkit-gen"
op="$CARGO_TARGET_DIR/release/ctxkit-bench-op"

# Inputs, generated once (seed 1).
for n in $sizes; do
  mkdir -p "$work/n$n"
  [[ -f "$work/n$n/session.jsonl" ]] || "$gen" session --entries "$n" --seed 1 --out "$work/n$n/session.jsonl"
done
if [[ "$sessions" -gt 0 && ! -d "$work/dir$sessions" ]]; then
  "$gen" dir --sessions "$sessions" --min-entries 20 --max-entries 1000 --seed 1 --out "$work/dir$sessions.tmp"
  mv "$work/dir$sessions.tmp" "$work/dir$sessions"
fi
for kind in mixed latin; do
  [[ -f "$work/text-$kind.txt" ]] || "$gen" text --kind "$kind" --bytes "$text_bytes" --seed 1 --out "$work/text-$kind.txt"
done

results="$work/results-pi-$pi_version.jsonl"
: > "$results"

# measure_once <side> <operation> <label> <input> <bytes> <entries> <run>: one fresh process; returns
# non-zero when it failed.
measure_once() {
  local side="$1" operation="$2" label="$3" input="$4" bytes="$5" entries="$6" run="$7" target out status
  target="$input"
  if [[ "$operation" == append* ]]; then
    rm -rf "$work/scratch" && mkdir -p "$work/scratch"
    cp "$input" "$work/scratch/session.jsonl"
    target="$work/scratch/session.jsonl"
  elif [[ "$operation" == branch ]]; then
    rm -rf "$work/scratch" && mkdir -p "$work/scratch"
    ln -s "$input" "$work/scratch/session.jsonl" 2>/dev/null || cp "$input" "$work/scratch/session.jsonl"
    target="$work/scratch/session.jsonl"
  fi
  status=ok
  load="$(cut -d' ' -f1 /proc/loadavg)"
  # The whole process's CPU time (user + system) and wall time, as the kernel counts them.
  if [[ "$side" == ctxkit ]]; then
    out="$(timeout "$op_timeout" /usr/bin/time -f '%U %S %e' -o "$work/last-time" "$op" "$operation" "$target" 2>"$work/last-stderr")" || status=failed
  else
    out="$(timeout "$op_timeout" /usr/bin/time -f '%U %S %e' -o "$work/last-time" "$node_bin" --max-old-space-size=16384 "$here/pi-op.mjs" "$operation" "$target" 2>"$work/last-stderr")" || status=failed
  fi
  cpu="$(awk 'END {printf "%.3f", $1 + $2}' "$work/last-time" 2>/dev/null || echo null)"
  process_wall="$(awk 'END {printf "%.3f", $3}' "$work/last-time" 2>/dev/null || echo null)"
  if [[ "$status" != ok || -z "$out" ]]; then
    echo "  $side $operation $label: failed ($(tail -c 300 "$work/last-stderr" | tr '\n' ' '))" >&2
    out='{"failed":true}'
  else
    echo "  $side $operation $label run $run: $out (process: ${cpu} s CPU, ${process_wall} s wall, load $load)" >&2
  fi
  printf '{"side":"%s","operation":"%s","input":"%s","bytes":%s,"entries":%s,"load":%s,"processCpuSeconds":%s,"processWallSeconds":%s,"result":%s}\n' \
    "$side" "$operation" "$label" "$bytes" "$entries" "$load" "${cpu:-null}" "${process_wall:-null}" "$out" >> "$results"
  rm -rf "$work/scratch"
  [[ "$status" == ok ]]
}

# measure <side> <operation> <label> <input> <bytes> <entries>: `repeat` runs, stopping at a failure.
measure() {
  local run
  for run in $(seq 1 "$repeat"); do
    measure_once "$@" "$run" || break
  done
}

# both <operation> <label> <input> <bytes> <entries> <reference_ok>: the two sides' runs taken in
# turns (ctxkit, then the reference, then ctxkit again...), so that a slower spell of the machine
# weighs on both sides alike.
both() {
  local operation="$1" label="$2" input="$3" bytes="$4" entries="$5" reference_ok="$6" run
  local ctxkit_ok=yes
  for run in $(seq 1 "$repeat"); do
    if [[ "$ctxkit_ok" == yes ]]; then
      measure_once ctxkit "$operation" "$label" "$input" "$bytes" "$entries" "$run" || ctxkit_ok=no
    fi
    if [[ "$reference_ok" == yes ]]; then
      measure_once reference "$operation" "$label" "$input" "$bytes" "$entries" "$run" || reference_ok=failed
    fi
  done
  if [[ "$reference_ok" == no ]]; then
    printf '{"side":"reference","operation":"%s","input":"%s","bytes":%s,"entries":%s,"result":{"skipped":true}}\n' \
      "$operation" "$label" "$bytes" "$entries" >> "$results"
  fi
}

for n in $sizes; do
  file="$work/n$n/session.jsonl"
  bytes="$(stat -c %s "$file")"
  reference_ok=yes
  [[ "$n" -le "$reference_max" ]] || reference_ok=no
  echo "Session of $n entries ($bytes bytes)" >&2
  for operation in $operations; do
    both "$operation" "$n entries" "$file" "$bytes" "$n" "$reference_ok"
  done
done
if [[ "$sessions" -gt 0 ]]; then
  dir="$work/dir$sessions"
  bytes="$(du -sb "$dir" | cut -f1)"
  echo "Directory of $sessions sessions ($bytes bytes)" >&2
  both list "$sessions sessions" "$dir" "$bytes" "$sessions" yes
fi
for kind in mixed latin; do
  [[ "$tokens" == yes ]] || break
  text="$work/text-$kind.txt"
  text_size="$(stat -c %s "$text")"
  echo "Tokenization of $text_size bytes of $kind text" >&2
  measure ctxkit tokens "$kind text" "$text" "$text_size" 0
  measure reference tokens-tiktoken "$kind text" "$text" "$text_size" 0
  measure reference tokens "$kind text" "$text" "$text_size" 0
done

echo "Results: $results" >&2
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), \
$(free -g | awk '/Mem:/ {print $2}') GiB RAM, load average before the table $(cut -d' ' -f1-3 /proc/loadavg); \
$(rustc --version); node $("$node_bin" --version); reference Pi $pi_version. \
Median of $repeat fresh processes per cell."
echo
"$node_bin" "$here/table.mjs" "$results"
