"""A minimal MCP server over stdio for the shared-state tests.

Tools: `w` (any arguments, answers with text) and `bad` (declares an output schema and
answers with structured content that violates it, so the proxy replaces the result and
counts a block toward the tool's breaker). With $STATE_TOOLS_CHANGED set, `w` lists a
different inputSchema (for the shared pins).
"""
import json
import os
import sys

TOOLS = [
    {"name": "w", "inputSchema": {"type": "object"}},
    {
        "name": "bad",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    },
]

if os.environ.get("STATE_TOOLS_CHANGED"):
    TOOLS[0] = {"name": "w", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg or "method" not in msg:
        continue
    method = msg["method"]
    if method == "initialize":
        result = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "state-test", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        if msg["params"]["name"] == "bad":
            result = {"content": [], "structuredContent": {"n": "not a number"}}
        else:
            result = {"content": [{"type": "text", "text": "done"}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
