"""jsongate between an MCP SDK client and a remote MCP server, every hop protected, end to end:

    MCP Python SDK client --https + bearer JWT--> jsongate mcp-proxy --https + its own credential--> MCP SDK server
                                                        |
                                                        +--rediss:// + AUTH--> redis-server (shared state)

Everything is made here: a CA and certificates (openssl), an ES256 key, its JWKS and tokens
(PyJWT), redis-server with TLS and a password, the SDK server behind uvicorn's TLS
(secure_server.py, which accepts only its own credential). Checks: the client's call goes
through with its token; the server sees the proxy's credential, never the client's token; a
client without a token, with an expired one, with another audience, or with a token signed by
another key is refused with 401 and the RFC 9728 challenge, and nothing reaches the server; the
metadata document is served; the proxy's shared state is in Redis (its pins), reached over TLS
with AUTH; the audit names the caller and holds no token.

    target/e2e/venv/bin/python tests/e2e/secure_e2e.py      # after tests/e2e/setup.sh

Uses $JSONGATE_BIN, else target/release/jsongate. Prints one JSON line per check; exit 1 if any
failed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import anyio
import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("JSONGATE_BIN") or os.path.join(ROOT, "target", "release", "jsongate")
RESOURCE_PATH = "/mcp"
ISSUER = "https://idp.e2e.test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_pki(d: str) -> None:
    """ca.pem; server.pem/.key (the SDK server and redis), front.pem/.key (jsongate)."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem", "-days", "2", "-subj", "/CN=e2e CA")
    ext = f"{d}/san.ext"
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    for name in ("server", "front"):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr", "-subj", "/CN=localhost")
        openssl("x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/ca.pem", "-CAkey",
                f"{d}/ca.key", "-CAcreateserial", "-out", f"{d}/{name}.pem", "-days", "2",
                "-extfile", ext)


async def call(url: str, ca: str, token: str | None) -> dict:
    """One SDK client session: whoami; what it returned, or the error."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        async with httpx2.AsyncClient(headers=headers, verify=ca, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http)) as c:
                r = await c.call_tool("whoami", {})
                return {"text": "".join(getattr(b, "text", "") for b in r.content),
                        "error": bool(r.is_error)}
    except BaseException as e:  # the SDK raises an exception group on a refused connection
        return {"raised": repr(e)[:300]}


def main() -> int:
    passed = failed = 0

    def check(name: str, ok: bool, detail: object = "") -> None:
        nonlocal passed, failed
        passed += ok
        failed += not ok
        print(json.dumps({"check": name, "pass": ok, **({"detail": detail} if not ok else {})}),
              flush=True)

    if not shutil.which("redis-server") or not shutil.which("openssl"):
        print(json.dumps({"skipped": "redis-server or openssl not installed"}))
        return 1
    d = tempfile.mkdtemp(prefix="jsongate-secure-e2e-")
    procs: list[subprocess.Popen] = []
    try:
        make_pki(d)
        ca = f"{d}/ca.pem"
        # The identity provider's key, its JWKS, the proxy's auth section.
        key = ec.generate_private_key(ec.SECP256R1())
        jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
        jwk.update({"kid": "e2e-1", "use": "sig", "alg": "ES256"})
        with open(f"{d}/jwks.json", "w") as f:
            json.dump({"keys": [jwk]}, f)
        fport, sport, rport = free_port(), free_port(), free_port()
        resource = f"https://localhost:{fport}{RESOURCE_PATH}"
        with open(f"{d}/auth.json", "w") as f:
            json.dump({"resource": resource, "issuer": ISSUER, "jwks_file": "jwks.json",
                       "required_scopes": ["invoices:read"]}, f)

        def token(aud: str = resource, exp: int = 300, signer=key, sub: str = "alice") -> str:
            now = int(time.time())
            return jwt.encode({"iss": ISSUER, "aud": aud, "sub": sub, "scope": "invoices:read",
                               "iat": now, "exp": now + exp, "client_id": "e2e-agent"},
                              signer, algorithm="ES256", headers={"kid": "e2e-1"})

        secrets = {"UPSTREAM_TOKEN": "upstream-secret-4f1c", "REDIS_PASSWORD": "redis-pw-e2e-77"}
        # The header value the proxy sends upstream, from its environment.
        env = {**os.environ, **secrets, "UPSTREAM_AUTH": f"Bearer {secrets['UPSTREAM_TOKEN']}"}
        # Redis over TLS only, with a password.
        procs.append(subprocess.Popen(
            ["redis-server", "--port", "0", "--tls-port", str(rport), "--tls-cert-file",
             f"{d}/server.pem", "--tls-key-file", f"{d}/server.key", "--tls-ca-cert-file", ca,
             "--tls-auth-clients", "no", "--requirepass", secrets["REDIS_PASSWORD"],
             "--save", "", "--appendonly", "no", "--dir", d],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        # The MCP server over https, accepting only its own credential.
        procs.append(subprocess.Popen(
            [sys.executable, os.path.join(HERE, "secure_server.py"), str(sport),
             f"{d}/server.pem", f"{d}/server.key"], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(rport)
        wait_port(sport)
        state = (f"rediss://localhost:{rport}?password_env=REDIS_PASSWORD&ca_file={ca}"
                 "&system_roots=false&prefix=e2e:")
        audit = f"{d}/audit.jsonl"
        front_log = open(f"{d}/front.log", "w")
        procs.append(subprocess.Popen(
            [BIN, "mcp-proxy", "--listen", f"127.0.0.1:{fport}", "--allow-host", "localhost",
             "--upstream", f"https://localhost:{sport}/mcp",
             "--upstream-ca-file", ca, "--upstream-no-system-roots",
             "--upstream-header", "Authorization=env:UPSTREAM_AUTH",
             "--tls-cert", f"{d}/front.pem", "--tls-key", f"{d}/front.key",
             "--auth", f"{d}/auth.json", "--state", state, "--audit", audit],
            env=env, stderr=front_log))
        wait_port(fport)
        url = f"https://localhost:{fport}{RESOURCE_PATH}"

        good = token()
        r = anyio.run(call, url, ca, good)
        check("an SDK client with a valid token reaches the https server through the proxy",
              r.get("text") == f"Bearer {secrets['UPSTREAM_TOKEN']}", r)
        check("the server saw the proxy's credential, not the client's token",
              good not in json.dumps(r), r)
        # The TypeScript SDK's client, over https with the same kind of token.
        out = subprocess.run(
            ["node", os.path.join(HERE, "http_ts_client.mjs"), url, os.path.join(ROOT, "target", "e2e")],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "NODE_EXTRA_CA_CERTS": ca, "JSONGATE_E2E_TOKEN": token(sub="bob")})
        try:
            ts = json.loads(out.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            ts = {"error": out.stderr[-500:]}
        check("the TypeScript SDK client with a valid token gets its tool result",
              ts.get("get_invoice", {}).get("structured") == {"id": "inv-1", "total": 12.5}
              and "whoami" in ts.get("tools", []), ts)
        other_key = ec.generate_private_key(ec.SECP256R1())
        for name, tok, reason in [("no token", None, "missing"),
                                  ("expired", token(exp=-3600), "expired"),
                                  ("another audience", token(aud="https://elsewhere.test/mcp"),
                                   "audience"),
                                  ("signed by another key", token(signer=other_key),
                                   "signature")]:
            r = anyio.run(call, url, ca, tok)
            last = [json.loads(l) for l in open(f"{d}/audit.jsonl")][-1]
            check(f"{name}: refused (401, audit reason {reason})",
                  "text" not in r and "raised" in r and last.get("reason") == reason
                  and last.get("http", {}).get("status") == 401, [r, last])
        # The 401 challenge and the metadata document, as a client discovers them.
        res = httpx2.post(url, verify=ca, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        challenge = res.headers.get("www-authenticate", "")
        meta_url = f"https://localhost:{fport}/.well-known/oauth-protected-resource{RESOURCE_PATH}"
        check("401 names the metadata document",
              res.status_code == 401 and f'resource_metadata="{meta_url}"' in challenge,
              [res.status_code, challenge])
        meta = httpx2.get(meta_url, verify=ca).json()
        check("the metadata document names the resource and the issuer",
              meta.get("resource") == resource and meta.get("authorization_servers") == [ISSUER],
              meta)
        # Shared state: the first-use pins are in Redis, reached over TLS with AUTH.
        keys = subprocess.run(
            ["redis-cli", "--tls", "--cacert", ca, "-h", "localhost", "-p", str(rport),
             "--no-auth-warning", "-a", secrets["REDIS_PASSWORD"], "--scan", "--pattern", "e2e:*"],
            capture_output=True, text=True, timeout=20).stdout.split()
        check("the proxy's shared state is in Redis (over TLS, with AUTH)", len(keys) > 0, keys)
        lines = [json.loads(l) for l in open(audit)]
        text = open(audit).read() + open(f"{d}/front.log").read()
        check("the audit names each caller",
              {"alice", "bob"} <= {l.get("subject") for l in lines}, lines)
        calls = sum(1 for l in lines if l.get("subject") == "alice" and l.get("tool") == "whoami")
        check("only the valid token's call reached the server", calls == 1, lines)
        check("no token and no secret in the audit or on stderr",
              good not in text and not any(s in text for s in secrets.values()))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(d, ignore_errors=True)
    print(json.dumps({"passed": passed, "failed": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
