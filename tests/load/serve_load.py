"""A bounded load test of `jsongate serve`: N concurrent clients (keep-alive connections,
Python http.client) each send M requests, through the proxy and directly to the upstream
(tests/integration/serve_upstream.py), and the script reports throughput, p50/p99 latency,
and the proxy's resident memory (sampled every 0.5 s, and its peak). Every answer through
the proxy must carry the request id of its own request: a lost, duplicated or crossed answer
fails the run (exit 1). It stops by itself.

    cargo build --release
    python3 tests/load/serve_load.py [--clients 64] [--requests 2000]
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "target", "release", "jsongate")
UPSTREAM = os.path.join(ROOT, "tests", "integration", "serve_upstream.py")
CONTRACT = os.path.join(ROOT, "fixtures", "gate", "review-status", "contract.json")


def rss_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def run(host, port, clients, requests, path, check):
    latencies = [[] for _ in range(clients)]
    errors = []

    def client(i):
        conn = http.client.HTTPConnection(host, port, timeout=30)
        for n in range(requests):
            rid = "c%d-r%d" % (i, n)
            t = time.perf_counter()
            try:
                conn.request("GET", path, headers={"X-Request-Id": rid})
                res = conn.getresponse()
                body = res.read()
            except OSError as e:
                errors.append("%s: %s" % (rid, e))
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=30)
                continue
            latencies[i].append(time.perf_counter() - t)
            if check:
                try:
                    env = json.loads(body)
                except ValueError:
                    env = {}
                if res.status != 200 or env.get("request_id") != rid \
                        or env.get("outcome") != "success":
                    errors.append("%s: %d %r" % (rid, res.status, body[:120]))
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    lat = sorted(x for l in latencies for x in l)
    return {
        "requests": len(lat),
        "seconds": round(elapsed, 2),
        "per_second": round(len(lat) / elapsed),
        "p50_ms": round(lat[len(lat) // 2] * 1000, 2) if lat else None,
        "p99_ms": round(lat[int(len(lat) * 0.99)] * 1000, 2) if lat else None,
        "errors": errors,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--requests", type=int, default=2000)
    a = ap.parse_args()
    up = subprocess.Popen([sys.executable, UPSTREAM], stdout=subprocess.PIPE)
    port = int(up.stdout.readline())
    tmp = tempfile.mkdtemp()
    config = {
        "serve": 1, "listen": "127.0.0.1:0", "audit": "audit.jsonl",
        "request_id_header": "X-Request-Id",
        "limits": {"max_connections": a.clients + 8},
        "routes": [{"method": "GET", "path_prefix": "/reviews",
                    "upstream": "http://127.0.0.1:%d/api/changes" % port,
                    "contract_file": CONTRACT,
                    "context": {"change_id": {"query": "change_id"}}}],
    }
    with open(os.path.join(tmp, "serve.json"), "w") as f:
        json.dump(config, f)
    proxy = subprocess.Popen([BIN, "serve", "--config", os.path.join(tmp, "serve.json")],
                             stderr=subprocess.PIPE, text=True)
    addr = proxy.stderr.readline().strip().removeprefix("listening on ")
    phost, pport = addr.rsplit(":", 1)
    samples = []
    done = threading.Event()

    def sample():
        while not done.is_set():
            samples.append(rss_kib(proxy.pid, "VmRSS"))
            time.sleep(0.5)

    try:
        direct = run("127.0.0.1", port, a.clients, a.requests, "/api/changes/c-42", False)
        sampler = threading.Thread(target=sample)
        sampler.start()
        proxied = run(phost, int(pport), a.clients, a.requests,
                      "/reviews/c-42?change_id=c-42", True)
        done.set()
        sampler.join()
        peak = rss_kib(proxy.pid, "VmHWM")
        with open(os.path.join(tmp, "audit.jsonl")) as f:
            audited = sum(1 for _ in f)
    finally:
        proxy.terminate()
        proxy.wait()
        up.kill()
        up.wait()
    third = max(1, len(samples) // 3)
    report = {
        "clients": a.clients, "requests_each": a.requests,
        "direct": {k: v for k, v in direct.items() if k != "errors"},
        "direct_errors": len(direct["errors"]),
        "serve": {k: v for k, v in proxied.items() if k != "errors"},
        "serve_errors": proxied["errors"][:5], "serve_error_count": len(proxied["errors"]),
        "audit_lines": audited,
        "serve_rss_kib": {"first_third_max": max(samples[:third], default=0),
                          "last_third_max": max(samples[-third:], default=0),
                          "peak": peak},
    }
    print(json.dumps(report, indent=1))
    expected = a.clients * a.requests
    ok = proxied["requests"] == expected and not proxied["errors"] and audited == expected
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
