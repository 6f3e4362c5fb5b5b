"""E2E client driver on the Python MCP SDK (`mcp` 2.3.0).

    python py_client.py --mode auto|legacy --script SCRIPT.json -- SERVER_COMMAND [ARGS...]
    python py_client.py --mode auto|legacy --script SCRIPT.json --url http://HOST:PORT/mcp

`--mode` is `mcp.Client(mode=...)`: "auto" (the SDK default) probes `server/discover`
(protocol 2026-07-28) and falls back to the `initialize` handshake; "legacy" always uses
the `initialize` handshake (2025-11-25). With `--url` the client connects over Streamable
HTTP (the SDK's streamable HTTP transport) instead of starting a server on stdio.

The script is a JSON list of steps, `{"op": "list_tools"}` or
`{"op": "call", "tool": NAME, "args": {...}, "timeout": SECONDS}`. One JSON line is printed
per step (see README.md, "Driver output"); the server's stderr goes to this stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import driver_common as common


def emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
    sys.stdout.flush()


def describe_exception(exc: BaseException) -> dict[str, Any]:
    # Task groups wrap the real failure: report the innermost single exception.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    record: dict[str, Any] = {"outcome": "exception", "class": type(exc).__name__}
    code = getattr(getattr(exc, "error", None), "code", None)
    if isinstance(code, int):
        record["code"] = code
    record["message"] = common.clip(str(exc))
    return record


def describe_result(result: Any) -> dict[str, Any]:
    texts = []
    for block in result.content:
        text = getattr(block, "text", None)
        texts.append(common.clip(text) if isinstance(text, str) else f"<{block.type}>")
    record: dict[str, Any] = {
        "outcome": "result",
        "isError": bool(result.is_error),
        "texts": texts,
    }
    if "structured_content" in result.model_fields_set or result.structured_content is not None:
        record["structuredContent"] = common.summarize(result.structured_content)
    return record


async def run(mode: str, steps: list[dict[str, Any]], command: list[str], url: str | None) -> None:
    params: Any = url or StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    connected = False
    finished = False
    # One cancel scope around the whole session (the client's task group must not cross
    # scopes): its deadline is the connect timeout, then none, then the close timeout.
    try:
        with anyio.CancelScope(deadline=anyio.current_time() + common.CONNECT_TIMEOUT) as scope:
            async with Client(params, mode=mode) as client:
                connected = True
                scope.deadline = math.inf
                emit({"step": "connect", "outcome": "ok", "protocolVersion": client.protocol_version})
                for index, step in enumerate(steps):
                    emit(await run_step(client, index, step))
                finished = True
                scope.deadline = anyio.current_time() + common.CLOSE_TIMEOUT
        if not connected and scope.cancelled_caught:
            emit({"step": "connect", "outcome": "timeout"})
    except Exception as exc:  # noqa: BLE001 - every failure is a reported outcome
        if not connected:
            emit({"step": "connect", **describe_exception(exc)})
        elif not finished:
            emit({"step": "session", **describe_exception(exc)})
        else:
            # Closing failed (e.g. the server already died): not a step outcome.
            traceback.print_exc(file=sys.stderr)


async def run_step(client: Client, index: int, step: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = {"step": index, "op": step["op"]}
    if "tool" in step:
        record["tool"] = step["tool"]
    timeout = float(step.get("timeout", common.CALL_TIMEOUT))
    try:
        with anyio.fail_after(timeout):
            if step["op"] == "list_tools":
                listed = await client.list_tools()
                record.update(outcome="ok", tools=sorted(t.name for t in listed.tools))
            elif step["op"] == "call":
                result = await client.call_tool(step["tool"], step.get("args", {}))
                record.update(describe_result(result))
            else:
                raise ValueError(f"unknown op {step['op']!r}")
    except TimeoutError:
        record["outcome"] = "timeout"
    except Exception as exc:  # noqa: BLE001
        record.update(describe_exception(exc))
    return record


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["auto", "legacy"], default="auto")
    parser.add_argument("--script", required=True, help="JSON file or inline JSON list of steps")
    parser.add_argument("--url", help="a Streamable HTTP endpoint, in place of a server command")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command and not options.url:
        parser.error("missing server command after -- (or --url)")
    steps = common.load_script(options.script)
    anyio.run(run, options.mode, steps, command, options.url)
    sys.stdout.flush()
    # Do not wait for leftover transport threads of a broken connection.
    os._exit(0)


if __name__ == "__main__":
    main()
