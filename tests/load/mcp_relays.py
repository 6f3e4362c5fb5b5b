"""What relays cost `jsongate mcp-proxy --upstream` and whether it gives them back: against
the test MCP server (tests/integration/mcp_http_server.py), the script opens N sessions and
keeps them, then sends M initializations the server fails (HTTP 500 and JSON-RPC errors in
turn) and M requests without a session (each a relay of its own, ended with its answer),
and prints the proxy's threads and resident memory after each stage, then after the kept
sessions are ended with DELETE. Failed and session-less relays must leave nothing behind: the
run fails (exit 1) if the thread count after them is above the one before, or if the
threads do not come back to the idle count once the sessions are ended. Linux only
(/proc).

    cargo build --release
    python3 tests/load/mcp_relays.py [--sessions 60] [--requests 2000]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "target", "release", "jsongate")
SERVER = os.path.join(ROOT, "tests", "integration", "mcp_http_server.py")


def status(pid):
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    return int(fields["Threads"][0]), int(fields["VmRSS"][0])


def post(addr, body, session=None):
    host, port = addr
    data = body.encode()
    head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n"
            "Connection: close\r\n" % (port, len(data)))
    if session:
        head += "Mcp-Session-Id: %s\r\n" % session
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(head.encode() + b"\r\n" + data)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out.decode("utf-8", "replace")
            out += chunk


def delete(addr, session):
    host, port = addr
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(("DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nMcp-Session-Id: %s\r\n"
                   "Connection: close\r\n\r\n" % (port, session)).encode())
        while s.recv(65536):
            pass


def initialize(client):
    return json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": client, "version": "1"}}})


def settle(pid, at_most, seconds=10):
    deadline = time.time() + seconds
    while True:
        threads, rss = status(pid)
        if threads <= at_most or time.time() > deadline:
            return threads, rss
        time.sleep(0.1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--jsongate", default=BIN)
    a = parser.parse_args()
    calls = tempfile.NamedTemporaryFile(suffix=".jsonl")
    server = subprocess.Popen([sys.executable, SERVER, calls.name], stdout=subprocess.PIPE, text=True)
    proxy = None
    try:
        sport = int(server.stdout.readline())
        proxy = subprocess.Popen([a.jsongate, "mcp-proxy", "--listen", "127.0.0.1:0", "--upstream",
                                  "http://127.0.0.1:%d/mcp" % sport,
                                  "--max-sessions", str(max(a.sessions, 1))],
                                 stderr=subprocess.PIPE, text=True)
        host, port = proxy.stderr.readline().split()[-1].rsplit(":", 1)
        addr = (host, int(port))
        # One whole session first, so that the runtime's threads exist.
        sid = None
        for line in post(addr, initialize("warm-up")).splitlines():
            if line.lower().startswith("mcp-session-id:"):
                sid = line.split(":", 1)[1].strip()
        delete(addr, sid)
        idle = settle(proxy.pid, 0, 1)
        print("idle: %d threads, %d KiB resident" % idle)
        kept = []
        for _ in range(a.sessions):
            for line in post(addr, initialize("kept")).splitlines():
                if line.lower().startswith("mcp-session-id:"):
                    kept.append(line.split(":", 1)[1].strip())
        busy = status(proxy.pid)
        print("%d sessions kept: %d threads, %d KiB resident" % (len(kept), *busy))
        for i in range(a.requests):
            post(addr, initialize("fail-500" if i % 2 else "fail-error"))
        failed = settle(proxy.pid, busy[0])
        print("+%d failed initializations: %d threads, %d KiB resident" % (a.requests, *failed))
        for i in range(a.requests):
            post(addr, json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}))
        sessionless = settle(proxy.pid, busy[0])
        print("+%d requests without a session: %d threads, %d KiB resident"
              % (a.requests, *sessionless))
        for s in kept:
            delete(addr, s)
        ended = settle(proxy.pid, idle[0])
        print("sessions ended: %d threads, %d KiB resident" % ended)
        ok = failed[0] <= busy[0] and sessionless[0] <= busy[0] and ended[0] <= idle[0]
        print("threads released" if ok else "FAIL: threads left behind")
        return 0 if ok else 1
    finally:
        for p in (proxy, server):
            if p:
                p.kill()
                p.wait()


if __name__ == "__main__":
    sys.exit(main())
