#!/usr/bin/env python3
"""Round-trip latency of tools/call against a real MCP server, direct vs through
`jsongate mcp-proxy`, measured in the same run with the same raw client (standard library
only: one line out, one line back, no SDK overhead in the way).

Usage: python3 tests/e2e/latency.py [--calls N] [--rounds R]
Needs `bash tests/e2e/setup.sh` (the pinned servers) and `cargo build --release`.

For each server and mode it reports the median and 99th percentile of N sequential calls,
alternating direct and proxied runs R times so that machine noise hits both alike.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, "target", "e2e", "node_modules", ".bin")
JSONGATE = os.path.join(ROOT, "target", "release", "jsongate")

SERVERS = {
    # name: (command, tool, arguments)
    "everything/echo": ([os.path.join(BIN, "mcp-server-everything")], "echo",
                        {"message": "hello"}),
    "everything/get-structured-content": ([os.path.join(BIN, "mcp-server-everything")],
                                          "get-structured-content", {"location": "Chicago"}),
}


def run(command, tool, args, calls):
    p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)

    def rpc(msg):
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
        if "id" not in msg:
            return None
        while True:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError("server closed")
            m = json.loads(line)
            if m.get("id") == msg["id"]:
                return m

    rpc({"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "latency", "version": "1"}}})
    rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})
    rpc({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    times = []
    first = None
    for i in range(calls):
        t0 = time.perf_counter()
        r = rpc({"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call",
                 "params": {"name": tool, "arguments": args}})
        times.append(time.perf_counter() - t0)
        if first is None:
            first = r
        if r.get("result", {}).get("isError"):
            raise RuntimeError(f"call failed: {r}")
    p.stdin.close()
    p.wait(timeout=10)
    return times, first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    print(f"{'server/tool':40} {'mode':8} {'median µs':>10} {'p99 µs':>10}")
    for name, (cmd, tool, args) in SERVERS.items():
        res = {"direct": [], "proxied": []}
        for _ in range(a.rounds):
            t, r1 = run(cmd, tool, args, a.calls)
            res["direct"] += t
            t, r2 = run([JSONGATE, "mcp-proxy", "--"] + cmd, tool, args, a.calls)
            res["proxied"] += t
            assert r1 == r2, (r1, r2)
        for mode, ts in res.items():
            ts = sorted(ts)
            med = statistics.median(ts) * 1e6
            p99 = ts[int(len(ts) * 0.99) - 1] * 1e6
            print(f"{name:40} {mode:8} {med:10.0f} {p99:10.0f}")
        d = statistics.median(res["direct"]) * 1e6
        p = statistics.median(res["proxied"]) * 1e6
        print(f"{name:40} {'overhead':8} {p - d:10.0f} ({(p / d - 1) * 100:+.0f} %)")


if __name__ == "__main__":
    sys.exit(main())
