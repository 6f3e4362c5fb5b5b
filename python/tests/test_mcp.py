"""The FastMCP middleware and the MCP ClientSession wrapper with the real packages: the
example FastMCP server (``examples/review_server.py``) as a subprocess, the MCP Python SDK
client over stdio and over Streamable HTTP.

The same cases run twice: against the guarded server with a plain SDK client (the
middleware decides), and against the unguarded server through ``GuardedSession`` (the
client-side wrapper decides). Both must give the agent the same things."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time

import jsongate
import pytest
from jsongate.mcp import GuardedSession
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

from support import FIXTURES, PYTHON

SERVER = PYTHON / "examples" / "review_server.py"
CONTRACT = FIXTURES / "gate" / "review-status" / "contract.json"
TIMEOUT = 60


@contextlib.asynccontextmanager
async def stdio_session(*flags):
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), *flags])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(*flags):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port), *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.asynccontextmanager
async def http_session(url):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result) -> str:
    return result.content[0].text


async def run_cases(session) -> dict:
    """What the agent gets for each case, in a form both sides can be compared on."""
    listed = await session.list_tools()
    out = {"offered": sorted(t.name for t in listed.tools)}
    schema = next(t for t in listed.tools if t.name == "review_status").output_schema
    out["review_output_schema_is_the_envelope"] = "oneOf" in (schema or {})
    for key, name, args in [
        ("approved", "review_status", {"change_id": "c-42"}),
        ("duplicate", "review_status", {"change_id": "c-43"}),
        ("extra_field", "review_status", {"change_id": "c-44"}),
        ("other_change", "review_status", {"change_id": "c-45"}),
        ("count_ok", "count_items", {"kind": "abc"}),
        ("count_broken", "count_items", {"kind": "broken"}),
        ("repeat_ok", "repeat", {"text": "ab", "times": 2}),
        ("repeat_bad", "repeat", {"text": "ab", "times": 9}),
    ]:
        r = await session.call_tool(name, args)
        out[key] = (bool(r.is_error), text_of(r), r.structured_content)
    return out


def check(out: dict) -> None:
    assert out["offered"] == ["count_items", "repeat", "review_status"]  # helpful_tool dropped
    assert out["review_output_schema_is_the_envelope"]
    err, text, structured = out["approved"]
    envelope = json.loads(text)
    assert not err and structured == envelope
    assert envelope["outcome"] == "success" and envelope["data"] == {"change_id": "c-42", "approved": True}
    for key, code in [
        ("duplicate", "INVALID_RESPONSE"),
        ("extra_field", "INVALID_RESPONSE"),
        ("other_change", "MISMATCH"),
    ]:
        err, text, structured = out[key]
        assert err and json.loads(text)["error"]["code"] == code, (key, text)
        assert "admin_override" not in text and "eve" not in text
    assert out["count_ok"][:1] == (False,) and out["count_ok"][2] == {"count": 3}
    assert out["count_broken"][:2] == (True, "jsongate: the tool result was refused (INVALID_RESPONSE)")
    assert "many" not in out["count_broken"][1]
    assert out["repeat_ok"][:2] == (False, "abab")
    assert out["repeat_bad"][0] is True
    assert "refused (ARGUMENTS_INVALID)" in out["repeat_bad"][1]


def guarded(session):
    return GuardedSession(session, contracts={"review_status": jsongate.Contract(CONTRACT)})


def test_fastmcp_middleware_over_stdio():
    async def go():
        async with stdio_session() as s:
            out = await run_cases(s)
            # A call to the dropped tool is refused by the server, not run.
            r = await s.call_tool("helpful_tool", {"query": "x"})
            assert r.is_error and "refused (TOOL_REFUSED)" in text_of(r)
            return out

    check(asyncio.run(asyncio.wait_for(go(), TIMEOUT)))


def test_fastmcp_middleware_over_streamable_http():
    async def go(url):
        async with http_session(url) as s:
            return await run_cases(s)

    with http_server() as url:
        check(asyncio.run(asyncio.wait_for(go(url), TIMEOUT)))


def test_client_session_wrapper_over_stdio_against_an_unguarded_server():
    async def go():
        async with stdio_session("--unguarded") as s:
            g = guarded(s)
            out = await run_cases(g)
            # Never sent: the wrapper dropped it from the listing.
            r = await g.call_tool("helpful_tool", {"query": "x"})
            assert r.is_error and "refused (TOOL_REFUSED)" in text_of(r)
            # The wrapped session is still reachable, and saw the poisoned tool.
            raw = await g.session.list_tools()
            assert "helpful_tool" in {t.name for t in raw.tools}
            return out

    check(asyncio.run(asyncio.wait_for(go(), TIMEOUT)))


def test_client_session_wrapper_over_streamable_http_against_an_unguarded_server():
    async def go(url):
        async with http_session(url) as s:
            return await run_cases(guarded(s))

    with http_server("--unguarded") as url:
        check(asyncio.run(asyncio.wait_for(go(url), TIMEOUT)))


def test_client_session_wrapper_can_raise_instead():
    async def go():
        async with stdio_session("--unguarded") as s:
            g = GuardedSession(s, on_refusal="raise")
            await g.list_tools()
            with pytest.raises(jsongate.GuardRejected) as e:
                await g.call_tool("repeat", {"text": "ab", "times": 9})
            assert e.value.result.code == "ARGUMENTS_INVALID"
            with pytest.raises(jsongate.GuardRejected):
                await g.call_tool("count_items", {"kind": "broken"})
            # A tool never listed is listed first, then checked.
            g2 = GuardedSession(s)
            assert not (await g2.call_tool("repeat", {"text": "a", "times": 1})).is_error

    asyncio.run(asyncio.wait_for(go(), TIMEOUT))


def test_the_unguarded_server_really_sends_what_the_guards_refuse():
    # Without a guard on either side the plain client receives the poisoned listing, the
    # duplicate-name text and the broken result: the guards above are what removed them.
    async def go():
        async with stdio_session("--unguarded") as s:
            names = {t.name for t in (await s.list_tools()).tools}
            dup = await s.call_tool("review_status", {"change_id": "c-43"})
            return names, dup

    names, dup = asyncio.run(asyncio.wait_for(go(), TIMEOUT))
    assert "helpful_tool" in names
    assert '"approved":false,"approved":true' in json.dumps(
        dup.structured_content
    ) or '"approved":false,"approved":true' in text_of(dup)


class FakeSession:
    """What GuardedSession wraps, in process: one tool listed, every call answered."""

    def __init__(self):
        self.sent = []

    async def list_tools(self):
        schema = {"type": "object", "properties": {"account": {"type": "string"}}}
        return ListToolsResult(tools=[Tool(name="get_account", input_schema=schema)])

    async def call_tool(self, name, arguments=None):
        self.sent.append((name, arguments))
        return CallToolResult(content=[TextContent(type="text", text="ok")], is_error=False)


ACCOUNTS = {
    "policy": 1,
    "tools": {
        "get_account": {
            "arguments": True,
            "requires": ["accounts:read"],
            "rules": [{"rule": "equals_context", "pointer": "/account", "context": "subject"}],
            "rate_limit": {"calls": 1, "window_seconds": 60},
        }
    },
}


def test_client_session_wrapper_decides_calls_for_the_current_caller(caplog):
    callers = iter(
        [
            jsongate.Caller("alice", scopes=["accounts:read"]),
            jsongate.Caller("bob", scopes=["accounts:read"]),
            jsongate.Caller("bob", scopes=["accounts:read"]),
            jsongate.Caller("alice", scopes=["accounts:read"]),
            jsongate.Caller("carol"),
        ]
    )
    session = FakeSession()
    g = GuardedSession(session, policy=jsongate.Policy(ACCOUNTS), caller=lambda: next(callers))

    async def go():
        out = []
        for account in ["alice", "alice", "bob", "alice", "carol"]:
            r = await g.call_tool("get_account", {"account": account})
            out.append(text_of(r))
        return out

    with caplog.at_level("INFO", logger="jsongate.audit"):
        out = asyncio.run(asyncio.wait_for(go(), TIMEOUT))
    assert out == [
        "ok",
        "jsongate: the call was refused (context_mismatch)",  # bob naming alice's account
        "ok",  # bob's own budget
        "jsongate: the call was refused (rate_limited)",  # alice's budget is spent
        "jsongate: the call was refused (grant_missing)",  # carol's credential has no scope
    ]
    assert session.sent == [("get_account", {"account": "alice"}), ("get_account", {"account": "bob"})]
    audits = [json.loads(r.getMessage()) for r in caplog.records if r.name == "jsongate.audit"]
    assert [(a["subject"], a["reason"]) for a in audits] == [
        ("alice", "ok"),
        ("bob", "context_mismatch"),
        ("bob", "ok"),
        ("alice", "rate_limited"),
        ("carol", "grant_missing"),
    ]


def test_client_session_wrapper_checks_its_caller_options():
    policy = jsongate.Policy(ACCOUNTS)
    with pytest.raises(ValueError, match="policy"):
        GuardedSession(FakeSession(), caller=jsongate.Caller("alice"))
    with pytest.raises(jsongate.ConfigError) as e:
        GuardedSession(FakeSession(), policy=policy, caller={"subject": "a\nb"})
    assert e.value.kind == "caller"
    # A callable's answer is checked at each call: a bad one raises, nothing is sent.
    session = FakeSession()
    g = GuardedSession(session, policy=policy, caller=lambda: {"subject": ""})
    with pytest.raises(jsongate.ConfigError):
        asyncio.run(g.call_tool("get_account", {"account": "alice"}))
    assert session.sent == []
    # A fixed caller (and grants besides its scopes).
    g = GuardedSession(session, policy=policy, grants=["accounts:read"], caller={"subject": "alice"})
    assert text_of(asyncio.run(g.call_tool("get_account", {"account": "alice"}))) == "ok"
