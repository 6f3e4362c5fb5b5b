"""The fault server (fault_server.py) over MCP Streamable HTTP, standard library only, for the
HTTP run of the e2e matrix (`matrix.py --transport http`).

    python http_fault_server.py PORT

Serves the MCP endpoint at http://127.0.0.1:PORT/mcp. Each POSTed JSON-RPC request is handed
to fault_server.handle(), whose output is streamed to the client as it is written (so a
result written in pieces with pauses arrives in pieces, and a `data:` line may be cut across
chunks):
- $FAULT_HTTP_BODY=sse (the default): `text/event-stream`, every line the fault server writes
  is one event (`id: N`, `data: LINE`), in chunked transfer encoding;
- $FAULT_HTTP_BODY=json: `application/json`, the bytes the fault server writes, as they are
  written (one message per request, as the transport requires).

A tool that makes the fault server exit (exit_now, no_newline) closes the connection without
ending the body. Notifications and responses get 202; GET answers 405 (no server stream, as
the transport allows); DELETE ends the session. Every POST body is appended to $FAULT_LOG as
one line, like the stdio server's input.

Transport faults the stdio server cannot make, as extra tools (listed with the fault tools'
output schema):
- http_500: status 500 with an HTML body;
- http_html: status 200, `Content-Type: text/html`, a valid result as the body;
- http_truncated: `Content-Length` announces more bytes than are sent, then the connection
  closes;
- http_unterminated: an SSE event whose `data:` line never ends, then the connection closes;
- http_no_event: an SSE stream that closes without sending any event.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fault_server as fs  # noqa: E402

BODY = os.environ.get("FAULT_HTTP_BODY", "sse")
HTTP_TOOLS = {
    "http_500": "status 500 with an HTML body",
    "http_html": "a valid result sent as text/html",
    "http_truncated": "Content-Length larger than the bytes sent, then the connection closes",
    "http_unterminated": "an SSE data line that never ends, then the connection closes",
    "http_no_event": "an SSE stream that closes without an event",
}
LOCK = threading.Lock()  # the fault server's state is global: one request at a time
SESSION = uuid.uuid4().hex
EVENTS = iter(range(1, 1 << 62))  # event ids, unique within the session (all streams)

_fault_tools = fs.tool_list


def tool_list() -> list[dict]:
    extra = [{"name": name, "description": f"fault: {what}", "inputSchema": fs.NO_ARGS,
              "outputSchema": fs.OUTPUT_SCHEMA} for name, what in HTTP_TOOLS.items()]
    return _fault_tools() + extra


fs.tool_list = tool_list


class Aborted(Exception):
    """The response must end by closing the connection, without ending the body."""


class Stream:
    """Stands in for the fault server's stdout during one request: sends the response head on
    the first write, then each write as one chunk (SSE-framed in sse mode)."""

    def __init__(self, handler: BaseHTTPRequestHandler, session: bool) -> None:
        self.handler = handler
        self.session = session
        self.started = False
        self.line_start = True

    def start(self, content_type: str) -> None:
        h = self.handler
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Transfer-Encoding", "chunked")
        if self.session:
            h.send_header("Mcp-Session-Id", SESSION)
        h.end_headers()
        self.started = True

    def chunk(self, data: bytes) -> None:
        if data:
            self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.handler.wfile.flush()

    def write(self, raw: bytes) -> None:
        if not self.started:
            self.start("text/event-stream" if BODY == "sse" else "application/json")
        if BODY == "json":
            self.chunk(raw)
            return
        framed = b""
        for piece in raw.splitlines(keepends=True):
            if self.line_start:
                framed += b"id: %d\ndata: " % next(EVENTS)
            if piece.endswith(b"\n"):
                framed += piece.rstrip(b"\r\n") + b"\n\n"
                self.line_start = True
            else:
                framed += piece
                self.line_start = False
        self.chunk(framed)

    def flush(self) -> None:
        pass

    def finish(self) -> None:
        if not self.started:
            self.start("text/event-stream" if BODY == "sse" else "application/json")
        self.handler.wfile.write(b"0\r\n\r\n")
        self.handler.wfile.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(405)
        self.send_header("Allow", "POST, DELETE")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_DELETE(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        fs.log_line(body)
        try:
            message = json.loads(body)
        except ValueError:
            self.plain(400, b"parse error")
            return
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            self.plain(202, b"")
            return
        name = (message.get("params") or {}).get("name")
        if message.get("method") == "tools/call" and name in HTTP_TOOLS:
            self.transport_fault(name, message)
            return
        stream = Stream(self, session=message.get("method") == "initialize")
        with LOCK:
            fs.out = stream
            try:
                fs.handle(message)
            except SystemExit:
                self.abort()
                return
        stream.finish()

    def plain(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
        self.send_response(status)
        if body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def abort(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(2)

    def transport_fault(self, name: str, message: dict) -> None:
        valid = {"approved": False, "score": 7, "note": "fine"}
        result = {"content": fs.content(fs.dumps(valid)), "structuredContent": valid}
        line = fs.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        if name == "http_500":
            self.plain(500, b"<html><body>upstream: internal error</body></html>", "text/html")
        elif name == "http_html":
            self.plain(200, line, "text/html")
        elif name == "http_truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(line) + 100))
            self.end_headers()
            self.wfile.write(line[: len(line) // 2])
            self.abort()
        elif name == "http_unterminated":
            stream = Stream(self, session=False)
            stream.start("text/event-stream")
            stream.chunk(b"id: 1\ndata: " + line[: len(line) // 2])
            self.abort()
        elif name == "http_no_event":
            stream = Stream(self, session=False)
            stream.start("text/event-stream")
            stream.chunk(b": a comment and nothing else\n\n")
            stream.finish()


def main() -> None:
    port = int(sys.argv[1])
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"http-fault-server: listening on {port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
