"""The official JSON Schema Test Suite (required tests of drafts 2020-12, 2019-09, 7, 6, 4)
through the Python API, as a smoke check of the binding: every instance validated one-shot
and fed to the incremental validator in 5-byte chunks; both must give the suite's verdict.

Instances are written back as JSON with their numbers' exact text (``parse_float`` and
``parse_int`` keep it), so big and precise numbers reach the engine as the suite wrote them.
Remote references resolve to ``remotes/`` under ``http://localhost:1234/``, registered as
resources: nothing is fetched."""

from __future__ import annotations

import json
from pathlib import Path

import jsongate
import pytest

from support import DATA, data_path

SUITE = "suites/json-schema-test-suite"
DRAFTS = {"draft2020-12": "2020-12", "draft2019-09": "2019-09", "draft7": "7", "draft6": "6", "draft4": "4"}
FILES = [
    (d, p.name) for d in DRAFTS for p in sorted((DATA / SUITE / "tests" / d).glob("*.json"))
] or [("draft2020-12", "(suite missing)")]
LIMITS = {"max_depth": 512}


class Raw(str):
    """A number's exact text."""


def dump(v) -> str:
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dump(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dump(x) for x in v) + "]"
    return json.dumps(v)


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"), parse_float=Raw, parse_int=Raw)


def remotes() -> dict:
    root = data_path(f"{SUITE}/remotes")
    return {
        "http://localhost:1234/" + p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*.json")
    }


@pytest.fixture(scope="module")
def resources():
    return remotes()


def verdict_of(schema: jsongate.Schema, data: bytes) -> bool:
    try:
        schema.validate(data, limits=LIMITS)
        return True
    except jsongate.ValidationError:
        return False


def chunked_verdict(schema: jsongate.Schema, data: bytes) -> bool:
    v = schema.validator(limits=LIMITS)
    for i in range(0, len(data), 5):
        if not v.feed(data[i : i + 5]):
            break
    try:
        v.finish()
        return True
    except jsongate.ValidationError:
        return False


@pytest.mark.parametrize("draft,name", FILES, ids=[f"{d}/{n}" for d, n in FILES])
def test_required_suite(draft, name, resources):
    path = data_path(f"{SUITE}/tests/{draft}/{name}")
    failures = []
    count = 0
    for case in load(path):
        schema = jsongate.Schema(dump(case["schema"]), draft=DRAFTS[draft], resources=resources)
        for t in case["tests"]:
            count += 1
            data = dump(t["data"]).encode()
            got = verdict_of(schema, data)
            chunked = chunked_verdict(schema, data)
            if got != t["valid"] or chunked != t["valid"]:
                failures.append(
                    f"{case['description']} / {t['description']}: one-shot {got}, chunked {chunked}"
                )
    assert count > 0
    assert not failures, "\n".join(failures)
