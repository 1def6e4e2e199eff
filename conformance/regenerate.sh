#!/usr/bin/env bash
# Regenerates conformance/corpus and conformance/vectors from scratch:
#   1. installs the pinned reference (@mariozechner/pi-coding-agent@0.73.1) into a
#      temp dir with npm (--ignore-scripts), unless PI_DIR already points at one;
#   2. node generate-corpus.mjs  -> corpus/*.jsonl + corpus/manifest.json
#   3. node record.mjs           -> vectors/*.json
#   4. node generate-compaction-corpus.mjs -> corpus-compaction/*.jsonl + manifest.json
#   5. node record-compaction.mjs          -> vectors-compaction/*.json
#   6. the same against @earendil-works/pi-coding-agent@0.87.1 (Node 22, from
#      npm when needed): vectors-087/ (corpus/), vectors-corpus-087/
#      (corpus-087/, from generate-corpus-087.mjs), vectors-compaction-087/
#   7. the same against @earendil-works/pi-coding-agent@1.6.0 (today's Pi, Node 22):
#      vectors-corpus-16/ (corpus-16/, from generate-corpus-16.mjs),
#      vectors-compaction-16/, vectors-edit-16.json (its `edit` tool on
#      edit-cases-16.json), vectors-prompt-16.json (its system prompt on
#      prompt-cases-16.json); its answers on corpus/ and corpus-087/ are recorded
#      into a temp dir and must equal vectors-087/ and vectors-corpus-087/ byte for
#      byte (its session layer is 0.87.1's), so they are not committed twice
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

source "$HERE/node22.sh"

if [ -z "${PI_DIR:-}" ]; then
  PI_DIR="$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-pi-ref.XXXXXX")"
  CLEAN_PI_DIR=1
  trap 'rm -rf "$PI_DIR"' EXIT
  echo "installing $PKG into $PI_DIR" >&2
  npm i --prefix "$PI_DIR" "$PKG" --no-audit --no-fund --ignore-scripts --loglevel=error >&2
fi
export PI_DIR

node "$HERE/generate-corpus.mjs" "$HERE/corpus"
node "$HERE/record.mjs" "$HERE/corpus" "$HERE/vectors"
node "$HERE/generate-compaction-corpus.mjs" "$HERE/corpus-compaction"
node "$HERE/record-compaction.mjs" "$HERE/vectors-compaction"

# Pi 0.87.1 (the 0.87-era files; today's reference, 1.6.0, follows): needs Node >= 22.19, installed from npm when the
# machine's Node is older. Its vectors cover the same corpora plus corpus-087/.
PKG_087="@earendil-works/pi-coding-agent@0.87.1"
NODE22="$(conformance_node22)"
if [ -z "${PI_DIR_087:-}" ]; then
  PI_DIR_087="$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-pi087-ref.XXXXXX")"
  CLEAN_PI_DIR_087=1
  trap 'rm -rf "$PI_DIR_087" ${CLEAN_PI_DIR:+"$PI_DIR"}' EXIT
  echo "installing $PKG_087 into $PI_DIR_087" >&2
  npm i --prefix "$PI_DIR_087" "$PKG_087" --no-audit --no-fund --ignore-scripts --loglevel=error >&2
fi
node "$HERE/generate-corpus-087.mjs" "$HERE/corpus-087"
PI_VERSION=0.87.1 PI_DIR="$PI_DIR_087" "$NODE22" "$HERE/record.mjs" "$HERE/corpus" "$HERE/vectors-087"
PI_VERSION=0.87.1 PI_DIR="$PI_DIR_087" "$NODE22" "$HERE/record.mjs" "$HERE/corpus-087" "$HERE/vectors-corpus-087"
PI_VERSION=0.87.1 PI_DIR="$PI_DIR_087" "$NODE22" "$HERE/record-compaction.mjs" "$HERE/vectors-compaction-087"

# Pi 1.6.0 (today's reference), on the same Node 22.
PKG_16="@earendil-works/pi-coding-agent@1.6.0"
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-pi16-scratch.XXXXXX")"
if [ -z "${PI_DIR_16:-}" ]; then
  PI_DIR_16="$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-pi16-ref.XXXXXX")"
  trap 'rm -rf "$PI_DIR_16" "$SCRATCH" ${CLEAN_PI_DIR_087:+"$PI_DIR_087"} ${CLEAN_PI_DIR:+"$PI_DIR"}' EXIT
  echo "installing $PKG_16 into $PI_DIR_16" >&2
  npm i --prefix "$PI_DIR_16" "$PKG_16" --no-audit --no-fund --ignore-scripts --loglevel=error >&2
else
  trap 'rm -rf "$SCRATCH" ${CLEAN_PI_DIR_087:+"$PI_DIR_087"} ${CLEAN_PI_DIR:+"$PI_DIR"}' EXIT
fi
node "$HERE/generate-corpus-16.mjs" "$HERE/corpus-16"
PI_VERSION=1.6.0 PI_DIR="$PI_DIR_16" "$NODE22" "$HERE/record.mjs" "$HERE/corpus-16" "$HERE/vectors-corpus-16"
PI_VERSION=1.6.0 PI_DIR="$PI_DIR_16" "$NODE22" "$HERE/record-compaction.mjs" "$HERE/vectors-compaction-16"
PI_DIR="$PI_DIR_16" "$NODE22" "$HERE/record-edits.mjs"
PI_DIR="$PI_DIR_16" "$NODE22" "$HERE/record-prompts.mjs"
PI_DIR="$PI_DIR_16" "$NODE22" "$HERE/record-colors.mjs"
# Its session layer is 0.87.1's: the same answers on the older corpora, byte for byte.
PI_VERSION=1.6.0 PI_DIR="$PI_DIR_16" "$NODE22" "$HERE/record.mjs" "$HERE/corpus" "$SCRATCH/corpus"
PI_VERSION=1.6.0 PI_DIR="$PI_DIR_16" "$NODE22" "$HERE/record.mjs" "$HERE/corpus-087" "$SCRATCH/corpus-087"
diff -r "$HERE/vectors-087" "$SCRATCH/corpus" >/dev/null || { echo "regenerate.sh: Pi 1.6.0 differs from 0.87.1 on corpus/: record it into its own vectors dir" >&2; exit 1; }
diff -r "$HERE/vectors-corpus-087" "$SCRATCH/corpus-087" >/dev/null || { echo "regenerate.sh: Pi 1.6.0 differs from 0.87.1 on corpus-087/: record it into its own vectors dir" >&2; exit 1; }
