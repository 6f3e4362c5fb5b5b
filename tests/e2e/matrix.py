#!/usr/bin/env python3
"""End-to-end matrix for `jsongate mcp-proxy`: real MCP clients x real and faulty servers.

    python3 tests/e2e/matrix.py [--relay proxy|direct] [--transport stdio|http] [--only CLIENT]
                                [--case NAME] [--jobs N]

Each case runs one client driver (py_client.py in "auto" and "legacy" mode, js_client.mjs,
rmcp-client) against one server command, through `jsongate mcp-proxy -- SERVER` (relay
"proxy", the default) or straight to the server (relay "direct": the relay without
validation, expected to fail many cases). The driver prints one JSON line per step; the
case's checks read them (and, for the fault server, the lines the server received).
Cases that expect a valid result compare what the client saw through the proxy with what
the same client sees directly. Standard library only; needs tests/e2e/setup.sh first.

With `--transport http` the fault-server cases that apply to HTTP run over MCP Streamable
HTTP instead: the fault server behind http_fault_server.py (SSE answers, and some cases again
with `application/json` answers), `jsongate mcp-proxy --listen ADDR --upstream URL` in between,
and each client on its streamable HTTP transport; plus transport faults stdio cannot have
(an upstream that closes mid-body, a 500, a non-JSON content type, an unterminated event).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
E2E = ROOT / "target" / "e2e"
VENV_PY = E2E / "venv" / "bin" / "python"
NODE_BIN = E2E / "node_modules" / ".bin"
RMCP_BIN = E2E / "rmcp-target" / "release" / "rmcp-e2e-client"

CLIENTS = ["py-auto", "py-legacy", "ts", "rmcp"]
TRANSPORT = ["stdio"]  # the --transport of this run (for the printed table)
CASE_TIMEOUT = 30.0  # hard limit for one client run: past it the case fails as "client hung"
FAULT_CALL_TIMEOUT = 6  # per-call timeout in the fault-server scripts (a hang shows as "timeout")
MARKER = "upstream:"  # every text the fault server writes contains it
VALID = {"approved": False, "score": 7, "note": "fine"}  # the fault server's valid result


# --------------------------------------------------------------------------------------------
# Running one client


@dataclass
class Run:
    records: list[dict[str, Any]]
    stderr: str
    returncode: int | None  # None: killed at CASE_TIMEOUT
    seconds: float
    tmp: str  # the run's scratch directory (removed afterwards; kept as text for normalizing)
    server_log: list[bytes] = field(default_factory=list)  # lines the fault server received

    def step(self, index: int) -> dict[str, Any] | None:
        for record in self.records:
            if record.get("step") == index:
                return record
        return None

    def connect(self) -> dict[str, Any] | None:
        return next((r for r in self.records if r.get("step") == "connect"), None)

    def calls_logged(self, tool: str) -> list[dict[str, Any]]:
        calls = []
        for raw in self.server_log:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("method") == "tools/call":
                if (message.get("params") or {}).get("name") == tool:
                    calls.append(message)
        return calls


def client_command(client: str, script: str) -> list[str]:
    if client in ("py-auto", "py-legacy"):
        mode = client.split("-", 1)[1]
        return [str(VENV_PY), str(HERE / "py_client.py"), "--mode", mode, "--script", script, "--"]
    if client == "ts":
        return ["node", str(HERE / "js_client.mjs"), "--script", script, "--node-modules", str(E2E), "--"]
    if client == "rmcp":
        return [str(RMCP_BIN), "--script", script, "--"]
    raise ValueError(client)


def kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, process: subprocess.Popen) -> bool:
    import socket

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


def http_endpoint(case: Case, relay: str, jsongate: Path, tmp: str, env: dict[str, str],
                  started: list[subprocess.Popen]) -> str:
    """Starts the HTTP fault server (and the proxy in front of it, for relay "proxy") and
    returns the URL the client connects to."""
    sport = free_port()
    server = subprocess.Popen([str(VENV_PY), str(HERE / "http_fault_server.py"), str(sport)], env=env,
                              cwd=tmp, stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(tmp, "server.stderr"), "wb"), start_new_session=True)
    started.append(server)
    if not wait_port(sport, server):
        raise RuntimeError("the HTTP fault server did not start")
    url = f"http://127.0.0.1:{sport}/mcp"
    if relay != "proxy":
        return url
    pport = free_port()
    options = case.proxy_args(tmp, jsongate) if case.proxy_args else []
    proxy = subprocess.Popen([str(jsongate), "mcp-proxy", *options, "--listen", f"127.0.0.1:{pport}",
                              "--upstream", url], env=env, cwd=tmp, stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(tmp, "proxy.stderr"), "wb"), start_new_session=True)
    started.append(proxy)
    if not wait_port(pport, proxy):
        raise RuntimeError("the proxy did not start: " + Path(tmp, "proxy.stderr").read_text(errors="replace")[-300:])
    return f"http://127.0.0.1:{pport}/mcp"


def run_client(client: str, case: Case, relay: str, jsongate: Path, transport: str = "stdio") -> Run:
    tmp = tempfile.mkdtemp(prefix=f"jsongate-e2e-{case.name}-{client}-")
    servers: list[subprocess.Popen] = []  # the HTTP server and proxy this run started
    try:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["FAULT_LOG"] = os.path.join(tmp, "fault.log")
        env["MEMORY_FILE_PATH"] = os.path.join(tmp, "memory.jsonl")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.update(case.env)
        script = json.dumps(case.steps(tmp))
        if transport == "http":
            url = http_endpoint(case, relay, jsongate, tmp, env, servers)
            command = client_command(client, script)[:-1] + ["--url", url]
        else:
            server = case.server(tmp)
            if relay == "proxy":
                options = case.proxy_args(tmp, jsongate) if case.proxy_args else []
                server = [str(jsongate), "mcp-proxy", *options, "--", *server]
            command = client_command(client, script) + server
        started = time.monotonic()
        with open(os.path.join(tmp, "stdout"), "wb") as out, open(os.path.join(tmp, "stderr"), "wb") as err:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                cwd=tmp,
                start_new_session=True,
            )
            try:
                returncode: int | None = process.wait(timeout=CASE_TIMEOUT)
            except subprocess.TimeoutExpired:
                returncode = None
            # Servers and proxies the client left behind go too (the group is this run's own).
            kill_group(process)
            if returncode is None:
                process.wait()
        seconds = time.monotonic() - started
        records = []
        for line in Path(tmp, "stdout").read_text(errors="replace").splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                records.append({"unparsed": line[:200]})
        stderr = Path(tmp, "stderr").read_text(errors="replace")
        log_path = Path(env["FAULT_LOG"])
        server_log = log_path.read_bytes().splitlines() if log_path.exists() else []
        return Run(records, stderr, returncode, seconds, tmp, server_log)
    finally:
        for process in servers:
            kill_group(process)
            process.wait()
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# What a client saw, in a few words


def seen(record: dict[str, Any] | None) -> str:
    if record is None:
        return "no record for the step"
    outcome = record.get("outcome")
    if outcome == "timeout":
        return "timeout (no answer)"
    if outcome == "exception":
        message = " ".join(str(record.get("message", "")).split())
        return f"{record.get('class')}: {message[:90]}"
    if outcome == "result":
        texts = " | ".join(" ".join(t.split()) for t in record.get("texts", []))
        text = f"isError={str(record.get('isError')).lower()} text={texts[:60]!r}"
        if "structuredContent" in record:
            text += f" sc={json.dumps(record['structuredContent'], sort_keys=True)[:70]}"
        else:
            text += " (no sc)"
        return text
    if outcome == "ok":
        return "ok"
    return json.dumps(record)[:120]


# --------------------------------------------------------------------------------------------
# Checks: each returns None when the run passes, or the reason it fails


Check = Callable[[Run, "Run | None"], "str | None"]


def connected(run: Run) -> str | None:
    if run.returncode is None:
        return f"client hung (killed after {CASE_TIMEOUT:.0f}s)"
    connect = run.connect()
    if connect is None:
        tail = " ".join(run.stderr.strip().splitlines()[-1:])[:120]
        return f"driver printed nothing (exit {run.returncode}): {tail}"
    if connect.get("outcome") != "ok":
        return f"connect failed: {seen(connect)}"
    return None


def is_rejection(record: dict[str, Any] | None) -> str | None:
    """The record is the proxy's replacement: an isError result whose text starts with
    "jsongate: " and carries no upstream text."""
    if record is None or record.get("outcome") != "result":
        return f"saw {seen(record)}"
    texts = record.get("texts", [])
    if not record.get("isError") or not texts or not texts[0].startswith("jsongate: "):
        return f"not rejected by jsongate: {seen(record)}"
    if any(MARKER in text for text in texts):
        return f"upstream text relayed: {seen(record)}"
    return None


def rejected(step: int) -> Check:
    def check(run: Run, baseline: Run | None) -> str | None:
        return is_rejection(run.step(step))

    return check


def no_invalid_accepted(step: int) -> Check:
    """Safety only: the client did not take the server's invalid result as a valid one."""

    def check(run: Run, baseline: Run | None) -> str | None:
        record = run.step(step)
        if record is not None and record.get("outcome") == "result" and not record.get("isError"):
            return f"the invalid result was accepted: {seen(record)}"
        return None

    return check


def is_connected(run: Run, baseline: Run | None) -> str | None:
    return connected(run)


def never_reached(tool: str) -> Check:
    def check(run: Run, baseline: Run | None) -> str | None:
        if run.calls_logged(tool):
            return f"the rejected call reached the server ({len(run.calls_logged(tool))}x)"
        return None

    return check


def reached(tool: str) -> Check:
    def check(run: Run, baseline: Run | None) -> str | None:
        return None if run.calls_logged(tool) else f"tools/call {tool} never reached the server"

    return check


def valid_result(step: int, predicate: Callable[[dict[str, Any]], bool] | None = None, what: str = "") -> Check:
    def check(run: Run, baseline: Run | None) -> str | None:
        record = run.step(step)
        if record is None or record.get("outcome") != "result" or record.get("isError"):
            return f"expected a valid result, saw {seen(record)}"
        if predicate is not None and not predicate(record):
            return f"unexpected result ({what}): {seen(record)}"
        return None

    return check


def tools_are(step: int, *expected: str) -> Check:
    """A list_tools step listed exactly these tool names."""

    def check(run: Run, baseline: Run | None) -> str | None:
        record = run.step(step)
        if record is None or record.get("outcome") != "ok" or "tools" not in record:
            return f"expected a tool listing, saw {seen(record)}"
        if sorted(record["tools"]) != sorted(expected):
            return f"listed {sorted(record['tools'])}, expected {sorted(expected)}"
        return None

    return check


def structured_is(step: int, expected: Any) -> Check:
    return valid_result(step, lambda r: r.get("structuredContent") == expected, f"structuredContent != {expected}")


def normalize(record: dict[str, Any] | None, tmp: str, mask_times: bool) -> Any:
    text = json.dumps(record, sort_keys=True)
    text = text.replace(os.path.realpath(tmp), "<TMP>").replace(tmp, "<TMP>")
    if mask_times:
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?", "<DATETIME>", text)
        text = re.sub(r"Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday", "<DAY>", text)
    return json.loads(text)


def same_as_direct(*steps: int, mask_times: bool = False) -> Check:
    """What the client saw through the relay equals what it sees connected directly."""

    def check(run: Run, baseline: Run | None) -> str | None:
        if baseline is None:
            return None  # relay "direct": the run is its own baseline
        problem = connected(baseline)
        if problem:
            return f"direct baseline failed: {problem}"
        for step in steps:
            ours = normalize(run.step(step), run.tmp, mask_times)
            theirs = normalize(baseline.step(step), baseline.tmp, mask_times)
            if ours != theirs:
                return f"step {step} differs from direct: {seen(run.step(step))} vs {seen(baseline.step(step))}"
        return None

    return check


# --------------------------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    name: str
    what: str  # one line for README/--list
    server: Callable[[str], list[str]]
    steps: Callable[[str], list[dict[str, Any]]]
    checks: list[Check]
    baseline: bool = False  # run the client directly too, for same_as_direct
    focus: int = 0  # the step whose outcome the table's "seen" column shows
    # A proxy bug reported but not fixed yet: a run failing `checks` but passing `safe_checks`
    # is "xfail" (not counted as a failure); one passing `checks` is "XPASS".
    known_issue: str | None = None
    safe_checks: list[Check] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # extra environment of the client (and server)
    # Options for `jsongate mcp-proxy`, from the run's scratch directory and the binary (may
    # prepare files there, e.g. record a lockfile).
    proxy_args: Callable[[str, Path], list[str]] | None = None


def call(tool: str, args: dict[str, Any] | None = None, timeout: float | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {"op": "call", "tool": tool, "args": args or {}}
    if timeout is not None:
        step["timeout"] = timeout
    return step


def fixed(*steps: dict[str, Any]) -> Callable[[str], list[dict[str, Any]]]:
    return lambda tmp: list(steps)


def everything(tmp: str) -> list[str]:
    return [str(NODE_BIN / "mcp-server-everything"), "stdio"]


def filesystem(tmp: str) -> list[str]:
    root = os.path.join(tmp, "files")
    os.makedirs(root, exist_ok=True)
    return [str(NODE_BIN / "mcp-server-filesystem"), root]


def memory(tmp: str) -> list[str]:
    return [str(NODE_BIN / "mcp-server-memory")]


def time_server(tmp: str) -> list[str]:
    return [str(E2E / "venv" / "bin" / "mcp-server-time")]


def fault(tmp: str) -> list[str]:
    return [str(VENV_PY), str(HERE / "fault_server.py")]


def lowlevel(tmp: str) -> list[str]:
    return [str(VENV_PY), str(HERE / "lowlevel_server.py")]


def files_script(tmp: str) -> list[dict[str, Any]]:
    path = os.path.join(tmp, "files", "hello.txt")
    return [
        call("list_allowed_directories"),
        call("write_file", {"path": path, "content": "hello from jsongate\n"}),
        call("read_text_file", {"path": path}),
    ]


ENTITY = {"name": "jsongate", "entityType": "project", "observations": ["scans JSON"]}


def has_text(needle: str) -> Callable[[dict[str, Any]], bool]:
    return lambda record: any(needle in text for text in record.get("texts", []))


def keys_are(*keys: str) -> Callable[[dict[str, Any]], bool]:
    return lambda record: sorted((record.get("structuredContent") or {}).keys()) == sorted(keys)


# Tool-definition integrity: the fault server's $FAULT_TOOLSET=pin listing, poisoned.
PIN_ENV = {"FAULT_TOOLSET": "pin", "FAULT_POISON": "1"}
PIN_STEPS = fixed(
    {"op": "list_tools"},                          # 0: poisoned tools and the twins removed
    call("poison_description", None, FAULT_CALL_TIMEOUT),  # 1: refused
    call("twin", None, FAULT_CALL_TIMEOUT),        # 2: refused
    call("ok", None, FAULT_CALL_TIMEOUT),          # 3: works
    call("rug_pull", None, FAULT_CALL_TIMEOUT),    # 4: works; widen/narrow change, added_later appears
    {"op": "list_tools"},                          # 5: the changed and the added tools removed
    call("widen", {"n": 50}, FAULT_CALL_TIMEOUT),  # 6: refused (maximum raised 10 -> 1000)
    call("narrow", {"s": "abc"}, FAULT_CALL_TIMEOUT),  # 7: refused (maxLength lowered 100 -> 5)
    call("added_later", None, FAULT_CALL_TIMEOUT),  # 8: refused (not pinned)
    call("ok", None, FAULT_CALL_TIMEOUT),          # 9: still works
)
PIN_CHECKS: list[Check] = [
    tools_are(0, "narrow", "ok", "rug_pull", "widen"),
    rejected(1), never_reached("poison_description"),
    rejected(2), never_reached("twin"),
    structured_is(3, VALID),
    valid_result(4),
    tools_are(5, "ok", "rug_pull"),
    rejected(6), never_reached("widen"),
    rejected(7), never_reached("narrow"),
    rejected(8), never_reached("added_later"),
    structured_is(9, VALID),
]


def recorded_lock(tmp: str, jsongate: Path) -> list[str]:
    """Records the clean listing (no poison, before rug_pull) with `jsongate mcp-pin`; the
    proxy then enforces it with --pin."""
    lock = os.path.join(tmp, "tools.lock")
    env = dict(os.environ, FAULT_TOOLSET="pin", FAULT_LOG=os.path.join(tmp, "pin.log"))
    env.pop("FAULT_POISON", None)
    subprocess.run([str(jsongate), "mcp-pin", "--out", lock, "--", *fault(tmp)], env=env, check=True,
                   stdout=subprocess.DEVNULL, timeout=CASE_TIMEOUT)
    return ["--pin", lock]


def build_cases() -> list[Case]:
    cases = [
        # Real servers: valid results pass unchanged.
        Case("everything-echo", "server-everything echo: result as seen directly",
             everything, fixed(call("echo", {"message": "hello jsongate"})),
             [valid_result(0, has_text("Echo: hello jsongate"), "echo text"), same_as_direct(0)], baseline=True),
        Case("everything-sum", "server-everything get-sum 2+3",
             everything, fixed(call("get-sum", {"a": 2, "b": 3})),
             [valid_result(0, has_text("5"), "sum"), same_as_direct(0)], baseline=True),
        Case("everything-structured", "server-everything get-structured-content (has an outputSchema)",
             everything, fixed(call("get-structured-content", {"location": "Chicago"})),
             [valid_result(0, keys_are("temperature", "conditions", "humidity"), "weather keys"),
              same_as_direct(0)], baseline=True),
        Case("everything-structured-listed", "the same after tools/list (the TS SDK then validates too)",
             everything, fixed({"op": "list_tools"}, call("get-structured-content", {"location": "Chicago"})),
             [valid_result(1, keys_are("temperature", "conditions", "humidity"), "weather keys"),
              same_as_direct(0, 1)], baseline=True, focus=1),
        Case("everything-bad-args", "echo with message=5 (inputSchema: string): rejected by the proxy",
             everything, fixed(call("echo", {"message": 5})), [rejected(0)]),
        Case("filesystem", "list_allowed_directories, write_file, read_text_file in a fresh directory",
             filesystem, files_script,
             [valid_result(0, has_text("Allowed directories"), "allowed dirs"),
              valid_result(1, has_text("Successfully wrote"), "write"),
              structured_is(2, {"content": "hello from jsongate\n"}),
              same_as_direct(0, 1, 2)], baseline=True, focus=2),
        Case("filesystem-bad-args", "write_file without the required content: rejected by the proxy",
             filesystem, lambda tmp: [call("write_file", {"path": os.path.join(tmp, "files", "x.txt")})],
             [rejected(0)]),
        Case("memory", "create_entities then read_graph (MEMORY_FILE_PATH in a fresh directory)",
             memory, fixed(call("create_entities", {"entities": [ENTITY]}), call("read_graph")),
             [structured_is(0, {"entities": [ENTITY]}),
              structured_is(1, {"entities": [ENTITY], "relations": []}),
              same_as_direct(0, 1)], baseline=True, focus=1),
        Case("memory-bad-args", "create_entities with entities a string: rejected by the proxy",
             memory, fixed(call("create_entities", {"entities": "not-an-array"})), [rejected(0)]),
        Case("time-current", "get_current_time UTC (times masked when compared)",
             time_server, fixed(call("get_current_time", {"timezone": "UTC"})),
             [valid_result(0, keys_are("timezone", "datetime", "day_of_week", "is_dst"), "time keys"),
              same_as_direct(0, mask_times=True)], baseline=True),
        Case("time-convert", "convert_time 12:00 UTC to Asia/Tokyo",
             time_server,
             fixed(call("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})),
             [valid_result(0, lambda r: (r.get("structuredContent") or {}).get("time_difference") == "+9.0h",
                           "time_difference"),
              same_as_direct(0, mask_times=True)], baseline=True),
        Case("time-bad-args", "get_current_time without the required timezone: rejected by the proxy",
             time_server, fixed(call("get_current_time", {})), [rejected(0)]),
        # Fault server: argument checks.
        Case("fault-args-ok", "echo_args n=3: forwarded, result unchanged",
             fault, fixed(call("echo_args", {"n": 3}, FAULT_CALL_TIMEOUT)),
             [structured_is(0, {"n": 3}), reached("echo_args"), same_as_direct(0)], baseline=True),
        Case("fault-args-max", "echo_args n=11 (maximum 10): rejected, never sent to the server",
             fault, fixed(call("echo_args", {"n": 11}, FAULT_CALL_TIMEOUT)),
             [rejected(0), never_reached("echo_args")]),
        Case("fault-args-extra", "echo_args with an extra property: rejected, never sent",
             fault, fixed(call("echo_args", {"n": 1, "sudo": True}, FAULT_CALL_TIMEOUT)),
             [rejected(0), never_reached("echo_args")]),
        Case("fault-args-missing", "echo_args without n: rejected, never sent",
             fault, fixed(call("echo_args", {}, FAULT_CALL_TIMEOUT)),
             [rejected(0), never_reached("echo_args")]),
        # Fault server: result faults.
        Case("fault-ok", "a valid result passes unchanged",
             fault, fixed(call("ok", None, FAULT_CALL_TIMEOUT)),
             [structured_is(0, VALID), same_as_direct(0)], baseline=True),
        Case("fault-crlf", "a valid result ended by CR LF passes unchanged",
             fault, fixed(call("crlf", None, FAULT_CALL_TIMEOUT)), [structured_is(0, VALID)]),
        Case("fault-no_newline", "tools/list, then a valid result without final newline, server exits",
             fault, fixed({"op": "list_tools"}, call("no_newline", None, FAULT_CALL_TIMEOUT)),
             [structured_is(1, VALID)], focus=1),
    ]
    for tool, what in [
        ("wrong_type", "structuredContent.approved is a string"),
        ("missing_structured", "no structuredContent although the tool has an outputSchema"),
        ("dup_forged", 'structuredContent {"approved":false,...,"approved":true}'),
        ("deep", "structuredContent nested 5,000 deep"),
        ("huge", "a 12 MiB result line"),
        ("bad_utf8", "invalid UTF-8 in a string"),
        ("extra_field", '"admin_override":true against additionalProperties:false'),
    ]:
        cases.append(Case(f"fault-{tool}", f"{what}: replaced by a jsongate error",
                          fault, fixed(call(tool, None, FAULT_CALL_TIMEOUT)), [rejected(0), reached(tool)]))
    for tool, what in [
        ("id_float", "the wrong_type result with its id written 2.0"),
        ("id_exp", "the wrong_type result with its id written 2e0"),
        ("id_string", 'the wrong_type result with its numeric id written as a string "2"'),
    ]:
        cases.append(Case(f"fault-{tool}", f"{what}: never accepted, the call answered by jsongate",
                          fault, fixed(call(tool, None, FAULT_CALL_TIMEOUT)), [rejected(0)]))
    cases += [
        Case("fault-big_valid", "a valid 3 MiB result passes unchanged (digest compared with direct)",
             fault, fixed(call("big_valid", None, FAULT_CALL_TIMEOUT)),
             [valid_result(0, lambda r: "$large" in (r.get("structuredContent") or {}), "3 MiB note"),
              same_as_direct(0)], baseline=True),
        Case("fault-split", "a valid result written in three pieces with pauses: unchanged",
             fault, fixed(call("split", None, FAULT_CALL_TIMEOUT)), [structured_is(0, VALID)]),
        Case("fault-split_bad", "the wrong_type result written in three pieces: replaced",
             fault, fixed(call("split_bad", None, FAULT_CALL_TIMEOUT)), [rejected(0)]),
        Case("fault-noise_blank", "an empty line before a valid result: the result comes",
             fault, fixed(call("noise_blank", None, FAULT_CALL_TIMEOUT)), [structured_is(0, VALID)]),
        Case("fault-noise_log", "a non-JSON log line on stdout before a valid result: the result comes",
             fault, fixed(call("noise_log", None, FAULT_CALL_TIMEOUT)), [structured_is(0, VALID)]),
        Case("fault-noise_json", "a JSON log record (an object, no jsonrpc/id) before a valid result: the result comes",
             fault, fixed(call("noise_json", None, FAULT_CALL_TIMEOUT)), [structured_is(0, VALID)]),
        Case("fault-banner", "a non-JSON banner line before the initialize answer: the client connects",
             fault, fixed(call("ok", None, FAULT_CALL_TIMEOUT)), [structured_is(0, VALID)],
             env={"FAULT_BANNER": "1"}),
    ]
    cases.append(Case("fault-batch", "the wrong_type result inside a one-element batch array: never accepted; "
                      "the call is answered by the proxy", fault, fixed(call("batch", None, 4)), [rejected(0)],
                      safe_checks=[is_connected, no_invalid_accepted(0)]))
    cases += [
        Case("pin-first-use", "tool definitions, trust on first use (--screen-tools reject): poisoned description, "
             "schema string and annotation and two tools under one name removed and refused; after "
             "list_changed a widened, a narrowed and an added tool removed and refused; unchanged tools work",
             fault, PIN_STEPS, PIN_CHECKS, focus=6, env=PIN_ENV,
             proxy_args=lambda tmp, jsongate: ["--screen-tools", "reject"]),
        Case("pin-lockfile", "the same with --pin, the lockfile recorded by jsongate mcp-pin from the clean listing",
             fault, PIN_STEPS, PIN_CHECKS, focus=6, env=PIN_ENV, proxy_args=recorded_lock),
    ]
    cases += [
        Case("lowlevel-good", "Python SDK low-level server, conforming structuredContent",
             lowlevel, fixed(call("lowlevel_good", None, FAULT_CALL_TIMEOUT)),
             [structured_is(0, {"approved": False, "score": 42}), same_as_direct(0)], baseline=True),
        Case("lowlevel-bad", "Python SDK low-level server, structuredContent violating its outputSchema",
             lowlevel, fixed(call("lowlevel_bad", None, FAULT_CALL_TIMEOUT)), [rejected(0)]),
    ]
    return cases


# The stdio cases that apply unchanged over Streamable HTTP (the fault server's results); the
# stdio framing cases (CR LF, no final newline, noise lines, banner, batch) have no HTTP form.
HTTP_CASES = [
    "fault-args-ok", "fault-args-max", "fault-args-extra", "fault-args-missing", "fault-ok",
    "fault-wrong_type", "fault-missing_structured", "fault-dup_forged", "fault-deep", "fault-huge",
    "fault-bad_utf8", "fault-extra_field", "fault-id_float", "fault-id_exp", "fault-id_string",
    "fault-split", "fault-split_bad", "pin-first-use", "pin-lockfile",
]
# Cases run again with application/json answers in place of SSE (big_valid only so: the Python
# SDK's client refuses SSE events over 1 MiB, directly as through the proxy).
HTTP_JSON_CASES = ["fault-big_valid", "fault-ok", "fault-wrong_type", "fault-dup_forged", "fault-huge", "fault-bad_utf8",
                   "fault-split", "fault-split_bad", "fault-extra_field"]


def answered_by_jsongate(step: int) -> Check:
    """An upstream that failed at the transport: the client gets the proxy's isError result or
    a JSON-RPC error answer (an exception carrying its code), never a hang, a broken stream or
    the upstream's bytes as a result."""

    def check(run: Run, baseline: Run | None) -> str | None:
        record = run.step(step)
        if record is None or record.get("outcome") == "timeout":
            return f"no answer: {seen(record)}"
        if record.get("outcome") == "exception":
            return None if "code" in record else f"not a JSON-RPC error answer: {seen(record)}"
        return is_rejection(record)

    return check


def build_http_cases() -> list[Case]:
    by_name = {case.name: case for case in build_cases()}
    cases = [by_name[name] for name in HTTP_CASES]
    for name in HTTP_JSON_CASES:
        case = by_name[name]
        cases.append(Case(f"{name}-json", f"{case.what} (application/json answer)", case.server, case.steps,
                          case.checks, baseline=case.baseline, focus=case.focus,
                          env={**case.env, "FAULT_HTTP_BODY": "json"}, proxy_args=case.proxy_args))
    for tool, what in [
        ("exit_now", "the upstream closes the connection without an answer"),
        ("no_newline", "the upstream closes the connection inside an SSE event"),
        ("http_truncated", "Content-Length larger than the body, then the connection closes"),
        ("http_unterminated", "an SSE data line that never ends, then the connection closes"),
        ("http_no_event", "an SSE stream that ends without an event"),
        ("http_500", "status 500 with an HTML body"),
        ("http_html", "a valid result sent as text/html"),
    ]:
        cases.append(Case(f"http-{tool}", f"{what}: answered by jsongate, no hang, nothing relayed",
                          fault, fixed(call(tool, None, FAULT_CALL_TIMEOUT)),
                          [answered_by_jsongate(0), no_invalid_accepted(0), reached(tool)]))
    return cases


# --------------------------------------------------------------------------------------------
# Wire cases: raw JSON-RPC lines to the fault server, with no SDK in between, to check bytes
# and ids exactly (what passes byte for byte, the replacement's exact shape, string ids,
# pagination, the server exiting with a call pending).

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
WIRE_TIMEOUT = 8.0


def rpc(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def tool_call(request_id: Any, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return rpc(request_id, "tools/call", {"name": tool, "arguments": args or {}})


@dataclass
class WireRun:
    lines: list[bytes]  # every line the client side received, as received (without the \n)
    eof: bool  # stdout closed before the end of the exchange or within WIRE_TIMEOUT after it
    timeouts: list[Any]  # ids whose answer never came
    server_log: list[bytes]
    stderr: str
    audit: list[dict[str, Any]] | None = None  # --audit lines, then {"$mode": file mode}

    def answer(self, request_id: Any) -> bytes | None:
        for line in self.lines:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                return line
        return None

    def ids(self) -> list[Any]:
        found = []
        for line in self.lines:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                found.append("<unparsable>")
                continue
            if isinstance(message, dict) and "id" in message and "method" not in message:
                found.append(message["id"])
        return found


def wire_exchange(messages: list[dict[str, Any]], relay: str, jsongate: Path, env_extra: dict[str, str],
                  pipelined: bool = False, audit: bool = False, proxy_args: list[str] | None = None) -> WireRun:
    """Sends each message and waits for the answer to it (requests) before the next; or, when
    pipelined, sends them all and closes stdin at once."""
    import queue
    import threading

    tmp = tempfile.mkdtemp(prefix="jsongate-e2e-wire-")
    try:
        env = dict(os.environ, FAULT_LOG=os.path.join(tmp, "fault.log"), **env_extra)
        command = fault(tmp)
        audit_path = os.path.join(tmp, "audit.jsonl")
        if relay == "proxy":
            options = [*(proxy_args or []), *(["--audit", audit_path] if audit else [])]
            command = [str(jsongate), "mcp-proxy", *options, "--", *command]
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=open(os.path.join(tmp, "stderr"), "wb"), env=env, cwd=tmp,
                                   start_new_session=True)
        received: queue.Queue[bytes | None] = queue.Queue()

        def reader() -> None:
            assert process.stdout is not None
            buffer = b""
            while chunk := process.stdout.read1(1 << 16):
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                for line in complete:
                    received.put(line)
            if buffer:
                received.put(buffer + b"<no newline>")
            received.put(None)

        threading.Thread(target=reader, daemon=True).start()
        lines: list[bytes] = []
        timeouts: list[Any] = []
        eof = False

        def wait_for(request_id: Any) -> None:
            nonlocal eof
            deadline = time.monotonic() + WIRE_TIMEOUT
            while not eof:
                try:
                    line = received.get(timeout=max(0.01, deadline - time.monotonic()))
                except queue.Empty:
                    timeouts.append(request_id)
                    return
                if line is None:
                    eof = True
                    return
                lines.append(line)
                try:
                    message = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                    return

        try:
            assert process.stdin is not None
            for message in messages:
                if eof:
                    break
                try:
                    process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
                    process.stdin.flush()
                except (BrokenPipeError, OSError):
                    break
                if "id" in message and "method" in message and not pipelined:
                    wait_for(message["id"])
            try:
                process.stdin.close()
            except OSError:
                pass
            # What comes after the client's EOF (the answers to nothing, then EOF).
            deadline = time.monotonic() + WIRE_TIMEOUT
            while not eof and time.monotonic() < deadline:
                try:
                    line = received.get(timeout=max(0.01, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if line is None:
                    eof = True
                else:
                    lines.append(line)
        finally:
            kill_group(process)
            process.wait()
        log_path = Path(env["FAULT_LOG"])
        server_log = log_path.read_bytes().splitlines() if log_path.exists() else []
        stderr = Path(tmp, "stderr").read_text(errors="replace")
        audit_lines = None
        if os.path.exists(audit_path):
            audit_lines = [json.loads(line) for line in Path(audit_path).read_text().splitlines() if line]
            audit_lines.append({"$mode": oct(os.stat(audit_path).st_mode & 0o777)})
        return WireRun(lines, eof, timeouts, server_log, stderr, audit_lines)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


WireCheck = Callable[[WireRun, "WireRun | None"], "str | None"]


@dataclass
class WireCase:
    name: str
    what: str
    messages: list[dict[str, Any]]
    checks: list[WireCheck]
    env: dict[str, str] = field(default_factory=dict)
    baseline: bool = False
    pipelined: bool = False
    audit: bool = False  # run the proxy with --audit FILE
    proxy_args: list[str] = field(default_factory=list)  # more options of mcp-proxy


def show(line: bytes | None) -> str:
    if line is None:
        return "nothing"
    text = line.decode("utf-8", "backslashreplace")
    return text if len(text) <= 150 else text[:150] + f"...<{len(line)} bytes>"


def exact_replacement(request_id: Any) -> WireCheck:
    """The answer is exactly the documented replacement, for this id."""

    def check(run: WireRun, baseline: WireRun | None) -> str | None:
        line = run.answer(request_id)
        if line is None:
            return f"no answer to id {request_id!r} (received {len(run.lines)} lines, timeouts {run.timeouts})"
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return f"answer is not JSON: {show(line)}"
        result = message.get("result") if isinstance(message, dict) else None
        try:
            text = result["content"][0]["text"]
        except (TypeError, KeyError, IndexError):
            return f"not a replacement: {show(line)}"
        expected = {"jsonrpc": "2.0", "id": request_id,
                    "result": {"content": [{"type": "text", "text": text}], "isError": True, "resultType": "complete"}}
        if message != expected or not isinstance(text, str) or not text.startswith("jsongate: "):
            return f"not the replacement: {show(line)}"
        if MARKER in text:
            return f"upstream text in the replacement: {show(line)}"
        if type(message["id"]) is not type(request_id):
            return f"id type changed: {show(line)}"
        return None

    return check


def bytes_as_direct(strip_cr: bool = False) -> WireCheck:
    """Every line received equals, byte for byte, what the server wrote (seen directly)."""

    def check(run: WireRun, baseline: WireRun | None) -> str | None:
        if baseline is None:
            return None
        ours = run.lines
        theirs = baseline.lines
        if strip_cr:
            ours = [line.rstrip(b"\r") for line in ours]
            theirs = [line.rstrip(b"\r") for line in theirs]
        theirs = [line.replace(b"<no newline>", b"") for line in theirs]
        if ours != theirs:
            for index, (a, b) in enumerate(zip(ours, theirs)):
                if a != b:
                    return f"line {index} differs: {show(a)} vs direct {show(b)}"
            return f"{len(ours)} lines vs {len(theirs)} directly"
        return None

    return check


def only_ids(*expected: Any, ordered: bool = True) -> WireCheck:
    """The client received answers for exactly these ids (nothing of the proxy's own), in this
    order unless not `ordered` (a relay may answer a held call after a later request)."""

    def check(run: WireRun, baseline: WireRun | None) -> str | None:
        ours, theirs = run.ids(), list(expected)
        if not ordered:
            ours, theirs = sorted(map(repr, ours)), sorted(map(repr, theirs))
        if ours != theirs:
            return f"answers for ids {run.ids()}, expected {list(expected)}"
        return None

    return check


def error_answer(request_id: Any) -> WireCheck:
    def check(run: WireRun, baseline: WireRun | None) -> str | None:
        line = run.answer(request_id)
        try:
            message = json.loads(line) if line is not None else None
        except (ValueError, RecursionError):
            message = None
        if not isinstance(message, dict) or not isinstance(message.get("error"), dict):
            return f"expected a JSON-RPC error for id {request_id!r}, saw {show(line)}"
        if not isinstance(message["error"].get("code"), int) or not isinstance(message["error"].get("message"), str):
            return f"malformed error: {show(line)}"
        return None

    return check


def wire_never_reached(tool: str) -> WireCheck:
    def check(run: WireRun, baseline: WireRun | None) -> str | None:
        for raw in run.server_log:
            if b'"tools/call"' in raw and json.dumps(tool).encode() in raw:
                return f"the call reached the server: {show(raw)}"
        return None

    return check


def audited(*expected: tuple[Any, str, str, str | None]) -> WireCheck:
    """--audit has exactly these (id, direction, verdict, class) lines, in order, mode 0600."""

    def check(run: WireRun, baseline: WireRun | None) -> str | None:
        if run.audit is None:
            return "no audit file"
        *lines, mode = run.audit
        if mode.get("$mode") != "0o600":
            return f"audit file mode {mode.get('$mode')}, expected 0o600"
        got = [(a.get("id"), a.get("direction"), a.get("verdict"), a.get("class")) for a in lines]
        if got != list(expected):
            return f"audit lines {got}, expected {list(expected)}"
        if any(MARKER in json.dumps(a) for a in lines):
            return "upstream text in the audit"
        return None

    return check


def stderr_passes(run: WireRun, baseline: WireRun | None) -> str | None:
    return None if "fault-server: started" in run.stderr else "the server's stderr did not pass through"


def reaches_eof(run: WireRun, baseline: WireRun | None) -> str | None:
    return None if run.eof else "stdout not closed (the relay did not exit)"


def line_ends_with(request_id: Any, suffix: bytes) -> WireCheck:
    def check(run: WireRun, baseline: WireRun | None) -> str | None:
        line = run.answer(request_id)
        if line is None or not line.endswith(suffix):
            return f"answer to {request_id!r} does not end with {suffix!r}: {show(line)}"
        return None

    return check


def passes_through(request_id: Any) -> WireCheck:
    """The answer is the server's own result, not a replacement."""

    def check(run: WireRun, baseline: WireRun | None) -> str | None:
        line = run.answer(request_id)
        if line is None or b"jsongate: " in line or MARKER.encode() not in line:
            return f"expected the server's result, saw {show(line)}"
        return None

    return check


def valid_answer(request_id: Any) -> WireCheck:
    def check(run: WireRun, baseline: WireRun | None) -> str | None:
        line = run.answer(request_id)
        try:
            message = json.loads(line) if line is not None else None
        except (ValueError, RecursionError):
            return f"answer is not JSON: {show(line)}"
        if not isinstance(message, dict) or message.get("result", {}).get("structuredContent") != VALID:
            return f"expected the valid result, saw {show(line)}"
        return None

    return check


def build_wire_cases() -> list[WireCase]:
    handshake = [INIT, INITIALIZED]
    listed = [*handshake, rpc(1, "tools/list")]
    cases = [
        WireCase("wire-valid-bytes", "handshake, tools/list, ok, tool_error (isError, no structuredContent), a "
                 "server request and notification, ping: every line byte for byte",
                 [*listed, tool_call(2, "ok"), tool_call(3, "tool_error"), tool_call(4, "server_request"),
                  rpc(5, "ping")],
                 [only_ids(0, 1, 2, 3, 4, 5), bytes_as_direct(), stderr_passes], baseline=True),
        WireCase("wire-client-eof", "all requests written at once, then stdin closed: every answer still comes",
                 [INIT, INITIALIZED, tool_call(1, "ok"), tool_call(2, "wrong_type"), rpc(3, "ping")],
                 [valid_answer(1), exact_replacement(2), only_ids(0, 1, 2, 3, ordered=False), reaches_eof],
                 pipelined=True),
        WireCase("wire-unknown-tool", "a call of a tool the server does not list: answered by the proxy, not sent",
                 [*listed, tool_call(4, "no_such_tool")], [exact_replacement(4), wire_never_reached("no_such_tool")]),
        WireCase("wire-list-changed", "after tools/list_changed and a new tools/list in which ok's outputSchema "
                 "changed, a call of ok is answered by the proxy (tool_changed), never judged by the old schema",
                 [*listed, tool_call(2, "ok"), tool_call(3, "tighten"), rpc(4, "tools/list"), tool_call(5, "ok")],
                 [valid_answer(2), exact_replacement(5)]),
        WireCase("wire-crlf", "a valid line ended by CR LF is relayed byte for byte (the CR kept)",
                 [*listed, tool_call(2, "crlf")], [only_ids(0, 1, 2), bytes_as_direct()], baseline=True),
        WireCase("wire-string-id", 'the replacement for id "a-1" (a string id) is exactly the documented line',
                 [*listed, tool_call("a-1", "wrong_type")], [exact_replacement("a-1")]),
        WireCase("wire-id-0", "the replacement for id 0 after a handshake with string id",
                 [{**INIT, "id": "init"}, INITIALIZED, rpc("l", "tools/list"), tool_call(0, "dup_forged")],
                 [exact_replacement(0), only_ids("init", "l", 0)]),
        WireCase("wire-call-before-list", "tools/call before any tools/list: replaced; the proxy's own "
                 "tools/list answer is not relayed", [*handshake, tool_call(7, "extra_field"), tool_call(8, "ok")],
                 [exact_replacement(7), valid_answer(8), only_ids(0, 7, 8)]),
        WireCase("wire-paginated-client", "tools/list in pages of 4 (client walks all pages), then a bad result "
                 "from the last page", [*handshake, rpc(1, "tools/list"), rpc(2, "tools/list", {"cursor": "4"}),
                 rpc(3, "tools/list", {"cursor": "8"}), rpc(4, "tools/list", {"cursor": "12"}),
                 tool_call(5, "extra_field")],
                 [exact_replacement(5)], env={"FAULT_PAGE_SIZE": "4"}),
        WireCase("wire-paginated-unlisted", "tools/list in pages of 4, client reads only page 1, then calls a tool "
                 "of page 3", [*handshake, rpc(1, "tools/list"), tool_call(2, "extra_field")],
                 [exact_replacement(2)], env={"FAULT_PAGE_SIZE": "4"}),
        WireCase("wire-args-page3", "pages of 4, client reads page 1 only; echo_args (page 4) n=11 is not sent",
                 [*handshake, rpc(1, "tools/list"), tool_call(2, "echo_args", {"n": 11})],
                 [exact_replacement(2)], env={"FAULT_PAGE_SIZE": "4"}),
        WireCase("wire-task-result", "task-augmented calls: tasks/result of wrong_type replaced, of ok unchanged",
                 [*listed, rpc(2, "tools/call", {"name": "wrong_type", "arguments": {}, "task": {"ttl": 60000}}),
                  rpc(3, "tasks/get", {"taskId": "task-1"}), rpc(4, "tasks/result", {"taskId": "task-1"}),
                  rpc(5, "tools/call", {"name": "ok", "arguments": {}, "task": {"ttl": 60000}}),
                  rpc(6, "tasks/result", {"taskId": "task-2"})],
                 [exact_replacement(4), valid_answer(6), only_ids(0, 1, 2, 3, 4, 5, 6)]),
        WireCase("wire-audit", "--audit: one line per tool call (passed, replaced, refused), mode 0600",
                 [*listed, tool_call(2, "ok"), tool_call(3, "wrong_type"), tool_call(4, "echo_args", {"n": 11}),
                  rpc(5, "ping")],
                 [audited((2, "to_client", "passed", None), (3, "to_client", "replaced", "schema"),
                          (4, "to_server", "refused", "schema"))], audit=True),
        WireCase("wire-format-annotation", "format: email is an annotation by default: the result passes",
                 [*listed, tool_call(2, "format_email")], [passes_through(2)]),
        WireCase("wire-format-assertion", "--format-assertion: the same result is replaced",
                 [*listed, tool_call(2, "format_email"), tool_call(3, "ok")], [exact_replacement(2), valid_answer(3)],
                 proxy_args=["--format-assertion"]),
        WireCase("wire-max-bytes", "--max-bytes 2000000: the valid 3 MiB result is replaced (too_large), the "
                 "next call still works", [*listed, tool_call(2, "big_valid"), tool_call(3, "ok")],
                 [exact_replacement(2), valid_answer(3)], proxy_args=["--max-bytes", "2000000"]),
        WireCase("wire-max-depth", "--max-depth 6000: the 5,000-deep result (valid against its schema) passes",
                 [*listed, tool_call(2, "deep")], [passes_through(2)], proxy_args=["--max-depth", "6000"]),
        WireCase("wire-no-newline", "a final line without newline at server EOF is relayed with a newline",
                 [*listed, tool_call(2, "no_newline")], [valid_answer(2), line_ends_with(2, b"}"), reaches_eof]),
        WireCase("wire-exit-pending", "the server exits with a call pending: a JSON-RPC error for it, then EOF",
                 [*listed, tool_call(9, "exit_now")], [error_answer(9), reaches_eof]),
    ]
    return cases


def evaluate_wire(case: WireCase, relay: str, jsongate: Path) -> tuple[WireCase, str | None, str]:
    run = wire_exchange(case.messages, relay, jsongate, case.env, case.pipelined, case.audit, case.proxy_args)
    baseline = None
    if relay == "proxy" and case.baseline:
        baseline = wire_exchange(case.messages, "direct", jsongate, case.env, case.pipelined)
    problem = None
    for check in case.checks:
        problem = check(run, baseline)
        if problem:
            break
    last_id = next((m["id"] for m in reversed(case.messages) if "id" in m), None)
    return case, problem, show(run.answer(last_id))


# --------------------------------------------------------------------------------------------
# Matrix


@dataclass
class Outcome:
    case: Case
    client: str
    problem: str | None  # the failure, or for "xfail" the known issue's failure
    seen: str
    seconds: float
    status: str = "pass"  # pass, FAIL, xfail, XPASS


def evaluate(case: Case, client: str, relay: str, jsongate: Path, transport: str = "stdio") -> Outcome:
    run = run_client(client, case, relay, jsongate, transport)
    baseline = None
    if relay == "proxy" and case.baseline:
        baseline = run_client(client, case, "direct", jsongate, transport)
    problem = connected(run)
    if problem is None:
        for check in case.checks:
            problem = check(run, baseline)
            if problem:
                break
    if problem is None and client == "py-auto" and case.server in (fault, lowlevel, time_server) \
            and transport == "stdio":
        # These servers answer server/discover: py-auto must stay on 2026-07-28 through the relay.
        version = (run.connect() or {}).get("protocolVersion")
        if version != "2026-07-28":
            problem = f"negotiated {version}, expected 2026-07-28 (server/discover)"
    focus = run.step(case.focus) if run.connect() else run.connect()
    status = "pass" if problem is None else "FAIL"
    if case.known_issue and relay == "proxy":
        if problem is None:
            status = "XPASS"
        elif not any(check(run, baseline) for check in case.safe_checks):
            status = "xfail"
    return Outcome(case, client, problem, seen(focus), run.seconds, status)


def print_table(outcomes: list[Outcome], cases: list[Case], clients: list[str], relay: str) -> None:
    by_key = {(o.case.name, o.client): o for o in outcomes}
    width = max(len(c.name) for c in cases)
    print(f"\njsongate e2e matrix, relay={relay}, transport={TRANSPORT[0]}\n")
    print(f"{'case':<{width}}  " + "  ".join(f"{c:<9}" for c in clients))
    print(f"{'-' * width}  " + "  ".join("-" * 9 for _ in clients))
    for case in cases:
        cells = []
        for client in clients:
            outcome = by_key[(case.name, client)]
            cells.append(f"{outcome.status:<9}")
        print(f"{case.name:<{width}}  " + "  ".join(cells))
    failures = [o for o in outcomes if o.status == "FAIL"]
    if failures and relay == "direct":
        print("\n(relay=direct: no validation in between, so many cases fail; what each client saw is below)")
    elif failures:
        print("\nFailures (case / client: reason):")
        for outcome in failures:
            print(f"  {outcome.case.name} / {outcome.client}: {outcome.problem}")
    known: dict[tuple[str, str], list[Outcome]] = {}
    for outcome in outcomes:
        if outcome.status in ("xfail", "XPASS"):
            known.setdefault((outcome.case.name, outcome.status), []).append(outcome)
    if known:
        print("\nKnown proxy issues (xfail: fail-closed but not as specified; XPASS: fixed, drop the mark):")
        for (name, status), group in known.items():
            first = group[0]
            who = ", ".join(o.client for o in group)
            print(f"  {status} {name} [{who}]: {first.case.known_issue}")
            print(f"      {first.problem or 'now passes'}")


def print_seen(outcomes: list[Outcome], cases: list[Case], clients: list[str]) -> None:
    by_key = {(o.case.name, o.client): o for o in outcomes}
    print("\nWhat each client finally saw (the case's main step):")
    for case in cases:
        print(f"  {case.name}: {case.what}")
        for client in clients:
            outcome = by_key[(case.name, client)]
            mark = {"pass": "ok  "}.get(outcome.status, outcome.status)
            print(f"    {mark} {client:<9} {outcome.seen}")


def main() -> int:
    # The wire cases parse lines 5,000 levels deep (json recurses once per level).
    sys.setrecursionlimit(20000)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--relay", choices=["proxy", "direct"], default="proxy")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                        help="stdio (every case), or http: the fault-server cases over Streamable HTTP")
    parser.add_argument("--only", action="append", choices=[*CLIENTS, "wire"],
                        help="run only this client, or the wire cases (repeatable)")
    parser.add_argument("--case", action="append", help="run only cases whose name contains this (repeatable)")
    parser.add_argument("--jobs", type=int, default=3, help="client runs at once (default 3)")
    parser.add_argument("--jsongate", type=Path, default=Path(os.environ.get("JSONGATE", ROOT / "target/release/jsongate")))
    parser.add_argument("--seen", action="store_true", help="also print what each client saw in every case")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    options = parser.parse_args()
    TRANSPORT[0] = options.transport

    cases = build_cases() if options.transport == "stdio" else build_http_cases()
    wire_cases = build_wire_cases() if options.transport == "stdio" else []
    if options.list:
        for case in [*cases, *wire_cases]:
            print(f"{case.name:<30} {case.what}")
        return 0
    if options.case:
        cases = [c for c in cases if any(part in c.name for part in options.case)]
        wire_cases = [c for c in wire_cases if any(part in c.name for part in options.case)]
    clients = [c for c in (options.only or CLIENTS) if c != "wire"]
    if options.only and "wire" not in options.only:
        wire_cases = []
    if not clients:
        cases = []
    if not cases and not wire_cases:
        print("no case matches", file=sys.stderr)
        return 2
    missing = [str(p) for p in (VENV_PY, NODE_BIN / "mcp-server-everything", RMCP_BIN) if not p.exists()]
    if options.relay == "proxy" and not options.jsongate.exists():
        missing.append(str(options.jsongate))
    if missing:
        print("missing (run tests/e2e/setup.sh and cargo build --release): " + ", ".join(missing), file=sys.stderr)
        return 2

    started = time.monotonic()
    jobs = [(case, client) for case in cases for client in clients]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        futures = [pool.submit(evaluate, case, client, options.relay, options.jsongate, options.transport)
                   for case, client in jobs]
        wire_futures = [pool.submit(evaluate_wire, case, options.relay, options.jsongate) for case in wire_cases]
        outcomes = [future.result() for future in futures]
        wire_outcomes = [future.result() for future in wire_futures]

    if cases:
        print_table(outcomes, cases, clients, options.relay)
        if options.seen or options.relay == "direct":
            print_seen(outcomes, cases, clients)
    if wire_cases:
        width = max(len(c.name) for c in wire_cases)
        print(f"\nWire cases (raw JSON-RPC lines, no SDK), relay={options.relay}\n")
        for case, problem, answer in wire_outcomes:
            print(f"{case.name:<{width}}  {'pass' if problem is None else 'FAIL'}  {case.what}")
            if problem:
                print(f"{'':<{width}}        -> {problem}")
            if options.seen:
                print(f"{'':<{width}}        last answer: {answer}")
    failed = sum(1 for o in outcomes if o.status == "FAIL") + sum(1 for _, problem, _ in wire_outcomes if problem)
    xfail = sum(1 for o in outcomes if o.status == "xfail")
    total = len(outcomes) + len(wire_outcomes) - xfail
    slowest = max(outcomes, key=lambda o: o.seconds, default=None)
    slow = f"; slowest client run {slowest.case.name}/{slowest.client} {slowest.seconds:.1f}s" if slowest else ""
    print(f"\n(relay={options.relay}, {time.monotonic() - started:.0f}s{slow}"
          + (f"; {xfail} known-issue runs (xfail) not counted" if xfail else "") + ")")
    print(f"{total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
