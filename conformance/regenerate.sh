#!/usr/bin/env bash
# Regenerates conformance/corpus and conformance/vectors from scratch:
#   1. installs the pinned reference (@mariozechner/pi-coding-agent@0.73.1) into a
#      temp dir with npm (--ignore-scripts), unless PI_DIR already points at one;
#   2. node generate-corpus.mjs  -> corpus/*.jsonl + corpus/manifest.json
#   3. node record.mjs           -> vectors/*.json
#   4. node generate-compaction-corpus.mjs -> corpus-compaction/*.jsonl + manifest.json
#   5. node record-compaction.mjs          -> vectors-compaction/*.json
# Needs Node >= 20 and npm. Output is deterministic: re-running it must not
# change any committed file.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PKG="@mariozechner/pi-coding-agent@0.73.1"

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "regenerate.sh: Node >= 20 required (found $(node --version))" >&2
  exit 1
fi

if [ -z "${PI_DIR:-}" ]; then
  PI_DIR="$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-pi-ref.XXXXXX")"
  trap 'rm -rf "$PI_DIR"' EXIT
  echo "installing $PKG into $PI_DIR" >&2
  npm i --prefix "$PI_DIR" "$PKG" --no-audit --no-fund --ignore-scripts --loglevel=error >&2
fi
export PI_DIR

node "$HERE/generate-corpus.mjs" "$HERE/corpus"
node "$HERE/record.mjs" "$HERE/corpus" "$HERE/vectors"
node "$HERE/generate-compaction-corpus.mjs" "$HERE/corpus-compaction"
node "$HERE/record-compaction.mjs" "$HERE/vectors-compaction"
