"""Output conventions shared by the Python e2e drivers; js_client.mjs and rmcp-client follow
the same rules so that records can be compared across relays (see README.md)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

CONNECT_TIMEOUT = 15.0
CALL_TIMEOUT = 10.0
CLOSE_TIMEOUT = 3.0
MAX_TEXT = 500
MAX_JSON = 4000
MAX_DEPTH = 64


def clip(text: str) -> str:
    """A text longer than MAX_TEXT characters becomes its first 200 and its length."""
    if len(text) <= MAX_TEXT:
        return text
    return f"{text[:200]}...<{len(text)} chars>"


def depth(value: Any) -> int:
    """Nesting depth of a JSON value (a scalar is 0), without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            deepest = max(deepest, level)
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in children)
    return deepest


def summarize(value: Any) -> Any:
    """The value itself, or a marker when it is too deep or too large to print."""
    levels = depth(value)
    if levels > MAX_DEPTH:
        return {"$deep": levels}
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    if len(text) > MAX_JSON:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return {"$large": len(text), "digest": f"sha256:{digest}"}
    return value


def load_script(arg: str) -> list[dict[str, Any]]:
    """A script is a JSON list of steps, given inline or as a file name."""
    if arg.lstrip().startswith("["):
        return json.loads(arg)
    with open(os.path.expanduser(arg), encoding="utf-8") as handle:
        return json.loads(handle.read())
