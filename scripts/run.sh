#!/usr/bin/env bash
# make run: the chat server on http://127.0.0.1:8000/mcp with the embedded
# defaults (SQLite under .data/, HS256 bearer tokens with a secret made on
# first use), after printing how to connect.
set -euo pipefail
cd "$(dirname "$0")/.."
ADDR="${MCPSTACK_RUN_ADDR:-127.0.0.1:8000}"
DATA="${MCPSTACK_RUN_DATA:-.data}"
BIN=bin/mcpstack
mkdir -p "$DATA"
chmod 700 "$DATA"
if [ ! -s "$DATA/secret" ]; then
  (umask 077 && head -c 48 /dev/urandom | base64 | tr -d '\n' > "$DATA/secret")
fi
TOKEN=$("$BIN" token --secret-file "$DATA/secret" --sub local-user --scope mcp --ttl 720h)
BIN_ABS="$(pwd)/$BIN"
cat >&2 <<MSG

mcpstack chat server: http://$ADDR/mcp  (Ctrl-C stops it)

Bearer token (valid 30 days; mint more with: $BIN token --secret-file $DATA/secret --sub NAME):
  export TOKEN=$TOKEN

Ask the chat tool in one request (revision 2026-07-28 needs no session):
  curl -s http://$ADDR/mcp -H "Authorization: Bearer \$TOKEN" \\
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: chat' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"query":"Hello!"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

MCP Inspector (npm install @modelcontextprotocol/inspector-cli@1.0.3, run from its build/ folder):
  node index.js http://$ADDR/mcp --transport http --header "Authorization: Bearer \$TOKEN" --method tools/list

Claude Desktop (claude_desktop_config.json; stdio needs no token):
  {"mcpServers": {"mcpstack": {"command": "$BIN_ABS", "args": ["serve", "--stdio", "--data-dir", "$(pwd)/$DATA"]}}}

Without a model configured, answers come from the offline echo provider; set
MCPSTACK_OPENAI_API_KEY (or --openai-base-url for Ollama, vLLM, ...) for a real one.

MSG
exec "$BIN" serve --http "$ADDR" --strict --auth hs256 --auth-secret-file "$DATA/secret" --data-dir "$DATA" "$@"
