"""Every ```python block of the documents (README.md, docs/, the package's PYPI.md) runs
against the installed package, from the repository's root so that fixture paths resolve.

A statement followed by a comment states its result, and is checked: `expr  # 'allow'` (a
Python literal) must evaluate to that value, and `print(...)  # a b c` must print that
line. Other comments are prose. Every block defines what it uses (a reader copies it whole),
except `contextvars` and `jsongate` when a later block goes on from an earlier one."""

from __future__ import annotations

import ast
import contextlib
import contextvars
import io
import os
import re

import pytest

import jsongate

from support import PYTHON, REPO


def documents():
    docs = [REPO / "README.md", PYTHON / "PYPI.md", *sorted((REPO / "docs").rglob("*.md"))]
    for path in docs:
        lines = path.read_text().splitlines()
        start = None
        for i, line in enumerate(lines):
            if start is None and line.strip() == "```python":
                start = i + 1
            elif start is not None and line.startswith("```"):
                yield pytest.param(path, start, "\n".join(lines[start:i]), id=f"{path.relative_to(REPO)}:{start}")
                start = None


BLOCKS = list(documents())


def test_the_documents_have_python_blocks():
    assert len(BLOCKS) >= 3, BLOCKS


class Checks(ast.NodeTransformer):
    """Rewrites each expression statement that carries a trailing comment into a check."""

    def __init__(self, source: str):
        self.lines = source.splitlines()
        self.checked = 0

    def comment(self, node: ast.AST) -> str | None:
        line = self.lines[node.end_lineno - 1]
        m = re.search(r"\)?\s+#\s?(.*)$", line[node.end_col_offset :])
        return m.group(1).strip() if m else None

    def visit_Expr(self, node: ast.Expr):
        comment = self.comment(node)
        if comment is None:
            return node
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print":
            check = "__printed"
        else:
            try:
                ast.literal_eval(comment)
            except (ValueError, SyntaxError):
                return node
            check = "__equals"
        self.checked += 1
        thunk = ast.Lambda(
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=call,
        )
        new = ast.Expr(
            ast.Call(
                func=ast.Name(check, ast.Load()),
                args=[thunk, ast.Constant(comment), ast.Constant(node.lineno)],
                keywords=[],
            )
        )
        return ast.copy_location(new, node)


def _equals(thunk, comment, line):
    got = thunk()
    assert got == ast.literal_eval(comment), f"line {line}: {got!r}, the document says {comment}"


def _printed(thunk, comment, line):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        thunk()
    assert out.getvalue().strip() == comment, f"line {line}: printed {out.getvalue()!r}, the document says {comment}"


@pytest.mark.parametrize("path,start,source", BLOCKS)
def test_a_python_block_runs_and_says_what_it_prints(path, start, source):
    tree = ast.parse(source)
    checks = Checks(source)
    tree = ast.fix_missing_locations(checks.visit(tree))
    namespace = {
        "__equals": _equals,
        "__printed": _printed,
        "contextvars": contextvars,
        "jsongate": jsongate,
    }
    if "policy_guardrail" in source:
        from jsongate.agents import policy_guardrail

        namespace["policy_guardrail"] = policy_guardrail
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        exec(compile(tree, f"{path.name}:{start}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    # Blocks that state results have them checked (a rewrite that lost them would fail here).
    if "# '" in source or "# True" in source:
        assert checks.checked > 0
