#!/bin/bash
# Lines of non-test Rust at a commit (docs/benchmarks.md, "Settings: one key's walk, compile time
# and lines"): every file under crates/*/src except tests/ folders and tests.rs files, each without
# its `#[cfg(test)] [#[attribute] …] mod … { … }` blocks (the attribute to the `}` at column 0).
# Prints all lines, then those neither blank nor a `//` comment.
# Usage: bench/loc.sh COMMIT [CRATE-NAME]
set -euo pipefail
commit=$1
cd "$(dirname "$0")/.."
git ls-tree -r --name-only "$commit" -- crates | grep -E "^crates/${2:-[^/]+}/src/.*\.rs$" \
  | grep -vE '/tests(/|\.rs$)' | while read -r file; do
  git show "$commit:$file" | awk '
    skip == 1 { if ($0 ~ /^}/) skip = 0; next }
    pending == 1 && /^#\[/ { held = held "\n" $0; next }
    pending == 1 {
      pending = 0
      if ($0 ~ /^(pub(\(crate\))? )?mod /) { if ($0 !~ /;$/) skip = 1; next }
      print held
    }
    /^#\[cfg\(test\)\]/ { pending = 1; held = $0; next }
    { print }'
done | awk '{ all++ } !/^[[:space:]]*$/ && !/^[[:space:]]*\/\// { code++ } END { print all, code }'
