#!/usr/bin/env bash
# Build, test and deploy the site to the staging host. Usage: ./deploy.sh [--skip-tests] [--dry-run]
set -euo pipefail

readonly ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly BUILD_DIR="${ROOT}/dist"
readonly REMOTE="${DEPLOY_REMOTE:-deploy@staging.internal}"
readonly REMOTE_DIR="/srv/www/site/releases/$(date -u +%Y%m%dT%H%M%SZ)"

skip_tests=false
dry_run=false
for arg in "$@"; do
  case "$arg" in
    --skip-tests) skip_tests=true ;;
    --dry-run) dry_run=true ;;
    -h|--help) sed -n '2p' "$0"; exit 0 ;;
    *) echo "error: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { printf '\033[1;34m==>\033[0m %s\n' "$*"; }
run() { if $dry_run; then echo "+ $*"; else "$@"; fi; }

cd "$ROOT"
log "installing dependencies"
run npm ci --no-audit --no-fund

if ! $skip_tests; then
  log "running tests"
  run npm test -- --reporter=dot
fi

log "building into ${BUILD_DIR}"
rm -rf "$BUILD_DIR"
run npm run build

if [[ ! -f "${BUILD_DIR}/index.html" ]] && ! $dry_run; then
  echo "error: build did not produce index.html" >&2
  exit 1
fi

log "uploading to ${REMOTE}:${REMOTE_DIR}"
run rsync -az --delete --exclude '*.map' "${BUILD_DIR}/" "${REMOTE}:${REMOTE_DIR}/"
run ssh "$REMOTE" "ln -sfn '${REMOTE_DIR}' /srv/www/site/current && sudo systemctl reload nginx"

# keep the five most recent releases
run ssh "$REMOTE" "ls -1dt /srv/www/site/releases/* | tail -n +6 | xargs -r rm -rf"
log "done"
