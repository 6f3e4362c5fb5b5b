"""Every example runs offline, as a user would run it, and prints what its docstring says."""

from __future__ import annotations

import json
import subprocess
import sys

from support import PYTHON

EXAMPLES = PYTHON / "examples"


def run(name: str) -> str:
    p = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=120, cwd=EXAMPLES
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def test_decorator_example():
    lines = [l for l in run("decorator.py").splitlines() if not l.startswith("  audit:")]
    got = {l.split(" ", 1)[0]: json.loads(l.split(" ", 1)[1]) for l in lines}
    assert got["c-42"]["outcome"] == "success"
    assert got["c-43"]["error"]["code"] == "INVALID_RESPONSE"
    assert got["c-44"]["error"]["code"] == "INVALID_RESPONSE"


def test_mcp_client_example_against_the_fastmcp_server_example():
    out = run("mcp_client.py")
    assert "offered: ['count_items', 'repeat', 'review_status']" in out
    assert '"outcome":"success"' in out
    assert (
        "repeat{'text': 'ab', 'times': 9}: isError=True jsongate: the call was refused (ARGUMENTS_INVALID)"
        in out
    )


def test_agents_example():
    out = run("agents_guardrail.py")
    assert "call-3 jsongate: the call was refused (arguments_invalid)" in out
    assert "final: done" in out
