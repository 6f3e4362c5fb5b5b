"""An MCP server on the Python SDK (mcp 2.3.0) served over https by uvicorn, which accepts only
its own credential: the upstream of tests/e2e/secure_e2e.py.

    python secure_server.py PORT CERT KEY

Every request must carry `Authorization: Bearer $UPSTREAM_TOKEN`, else 401 (so a proxy that
passed its client's token through, or sent none, would fail). `whoami` answers the
Authorization header its request came with.
"""

import os
import sys
from typing import TypedDict

import uvicorn
from mcp.server.mcpserver import Context, MCPServer


class Invoice(TypedDict):
    id: str
    total: float


app = MCPServer("jsongate-secure-e2e")


@app.tool()
def get_invoice(id: str) -> Invoice:
    """Reads one invoice."""
    return {"id": id, "total": 12.5}


@app.tool()
def whoami(ctx: Context) -> str:
    """The credentials this request came with."""
    return (ctx.headers or {}).get("authorization", "none")


EXPECTED = ("Bearer " + os.environ["UPSTREAM_TOKEN"]).encode()
inner = app.streamable_http_app(host="localhost")


async def only_our_credential(scope, receive, send):
    """ASGI wrapper: 401 unless the request carries this server's own credential."""
    if scope["type"] == "http":
        auth = dict(scope["headers"]).get(b"authorization")
        if auth != EXPECTED:
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"wrong credential\n"})
            return
    await inner(scope, receive, send)


port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
uvicorn.run(only_our_credential, host="127.0.0.1", port=port, ssl_certfile=cert,
            ssl_keyfile=key, log_level="warning", lifespan="on")
