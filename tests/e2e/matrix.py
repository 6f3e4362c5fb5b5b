#!/usr/bin/env python3
"""End-to-end matrix for `jsongate mcp-proxy`: real MCP clients x real and faulty servers.

    python3 tests/e2e/matrix.py [--relay proxy|direct] [--only CLIENT] [--case NAME] [--jobs N]

Each case runs one client driver (py_client.py in "auto" and "legacy" mode, js_client.mjs,
rmcp-client) against one server command, through `jsongate mcp-proxy -- SERVER` (relay
"proxy", the default) or straight to the server (relay "direct": the relay without
validation, expected to fail many cases). The driver prints one JSON line per step; the
case's checks read them (and, for the fault server, the lines the server received).
Cases that expect a valid result compare what the client saw through the proxy with what
the same client sees directly. Standard library only; needs tests/e2e/setup.sh first.
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


def run_client(client: str, case: Case, relay: str, jsongate: Path) -> Run:
    tmp = tempfile.mkdtemp(prefix=f"jsongate-e2e-{case.name}-{client}-")
    try:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["FAULT_LOG"] = os.path.join(tmp, "fault.log")
        env["MEMORY_FILE_PATH"] = os.path.join(tmp, "memory.jsonl")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        server = case.server(tmp)
        if relay == "proxy":
            server = [str(jsongate), "mcp-proxy", "--", *server]
        script = json.dumps(case.steps(tmp))
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
    cases += [
        Case("lowlevel-good", "Python SDK low-level server, conforming structuredContent",
             lowlevel, fixed(call("lowlevel_good", None, FAULT_CALL_TIMEOUT)),
             [structured_is(0, {"approved": False, "score": 42}), same_as_direct(0)], baseline=True),
        Case("lowlevel-bad", "Python SDK low-level server, structuredContent violating its outputSchema",
             lowlevel, fixed(call("lowlevel_bad", None, FAULT_CALL_TIMEOUT)), [rejected(0)]),
    ]
    return cases


# --------------------------------------------------------------------------------------------
# Matrix


@dataclass
class Outcome:
    case: Case
    client: str
    problem: str | None
    seen: str
    seconds: float


def evaluate(case: Case, client: str, relay: str, jsongate: Path) -> Outcome:
    run = run_client(client, case, relay, jsongate)
    baseline = None
    if relay == "proxy" and case.baseline:
        baseline = run_client(client, case, "direct", jsongate)
    problem = connected(run)
    if problem is None:
        for check in case.checks:
            problem = check(run, baseline)
            if problem:
                break
    focus = run.step(case.focus) if run.connect() else run.connect()
    return Outcome(case, client, problem, seen(focus), run.seconds)


def print_table(outcomes: list[Outcome], cases: list[Case], clients: list[str], relay: str) -> None:
    by_key = {(o.case.name, o.client): o for o in outcomes}
    width = max(len(c.name) for c in cases)
    print(f"\njsongate e2e matrix, relay={relay}\n")
    print(f"{'case':<{width}}  " + "  ".join(f"{c:<9}" for c in clients))
    print(f"{'-' * width}  " + "  ".join("-" * 9 for _ in clients))
    for case in cases:
        cells = []
        for client in clients:
            outcome = by_key[(case.name, client)]
            cells.append(f"{'pass' if outcome.problem is None else 'FAIL':<9}")
        print(f"{case.name:<{width}}  " + "  ".join(cells))
    failures = [o for o in outcomes if o.problem]
    if failures:
        print("\nFailures (case / client: reason):")
        for outcome in failures:
            print(f"  {outcome.case.name} / {outcome.client}: {outcome.problem}")


def print_seen(outcomes: list[Outcome], cases: list[Case], clients: list[str]) -> None:
    by_key = {(o.case.name, o.client): o for o in outcomes}
    print("\nWhat each client finally saw (the case's main step):")
    for case in cases:
        print(f"  {case.name}: {case.what}")
        for client in clients:
            outcome = by_key[(case.name, client)]
            mark = "ok  " if outcome.problem is None else "FAIL"
            print(f"    {mark} {client:<9} {outcome.seen}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--relay", choices=["proxy", "direct"], default="proxy")
    parser.add_argument("--only", action="append", choices=CLIENTS, help="run only this client (repeatable)")
    parser.add_argument("--case", action="append", help="run only cases whose name contains this (repeatable)")
    parser.add_argument("--jobs", type=int, default=3, help="client runs at once (default 3)")
    parser.add_argument("--jsongate", type=Path, default=Path(os.environ.get("JSONGATE", ROOT / "target/release/jsongate")))
    parser.add_argument("--seen", action="store_true", help="also print what each client saw in every case")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    options = parser.parse_args()

    cases = build_cases()
    if options.list:
        for case in cases:
            print(f"{case.name:<30} {case.what}")
        return 0
    if options.case:
        cases = [c for c in cases if any(part in c.name for part in options.case)]
    clients = options.only or CLIENTS
    if not cases:
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
        futures = [pool.submit(evaluate, case, client, options.relay, options.jsongate) for case, client in jobs]
        outcomes = [future.result() for future in futures]

    print_table(outcomes, cases, clients, options.relay)
    if options.seen or options.relay == "direct":
        print_seen(outcomes, cases, clients)
    failed = sum(1 for o in outcomes if o.problem)
    slowest = max(outcomes, key=lambda o: o.seconds)
    print(f"\n(relay={options.relay}, {time.monotonic() - started:.0f}s; slowest run "
          f"{slowest.case.name}/{slowest.client} {slowest.seconds:.1f}s)")
    print(f"{len(outcomes) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
