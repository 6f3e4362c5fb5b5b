"""Validating untrusted JSON text in Python: jsongate against parse-then-validate.

For each bench document and its schema, the time to go from the document's bytes to a
verdict:

- ``jsongate``: ``Schema.is_valid(bytes)``: strict JSON, UTF-8, duplicate names, limits and
  the schema in one pass, no Python objects built;
- ``jsongate.loads``: ``loads(bytes, schema)``: the same pass, also building the Python
  objects (what a caller that wants the data runs);
- ``json+jsonschema``: ``json.loads`` then python-jsonschema's ``is_valid`` (validator built
  once, outside the timing);
- ``orjson+jsonschema``: ``orjson.loads`` then the same;
- ``json+jsonschema-rs`` / ``orjson+jsonschema-rs``: the parser, then jsonschema-rs's
  ``is_valid`` on the Python objects (validator built once);
- ``orjson.loads`` alone: parsing without any validation, the floor that ``jsongate.loads``
  is measured against (it accepts the mutated copies, so it is left out of the agreement
  check).

Before timing, every implementation must accept the document and reject a mutated copy;
otherwise the comparison is meaningless and the script fails. ``format`` is an annotation
for all of them (their default for draft 2020-12).

    python bench.py            # the table (minimum of repeated runs, per document)
    python bench.py --check    # only the agreement check (what CI runs)
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import json
import platform
import sys
import time
from pathlib import Path

import jsonschema
import jsonschema_rs
import orjson

import jsongate

REPO = Path(__file__).resolve().parents[2]
CORPORA = REPO / "tests" / "data" / "corpora"
SCHEMAS = REPO / "benches" / "schemas"

ENVELOPE = b'{"ok":true,"tool":"web_search","request_id":"req_8f3a2c1b9d","elapsed_ms":42,"result":{"status":"success","message":"Operation completed","count":3}}'

# What `jsongate gate` prints for fixtures/gate/review-status (schema: its `contract
# envelope-schema`, saved as benches/schemas/review-status-envelope.schema.json).
GATE_ENVELOPE = b'{"tool":"review_status","request_id":"req_8f3a2c1b9d","outcome":"success","data":{"change_id":"c-42","approved":true}}'

TWITTER_SCHEMA = {
    "type": "object",
    "required": ["statuses", "search_metadata"],
    "properties": {
        "statuses": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "text", "user"],
                "properties": {
                    "id": {"type": "integer", "minimum": 0},
                    "text": {"type": "string", "maxLength": 1000},
                    "user": {"type": "object", "required": ["id", "screen_name"]},
                    "retweet_count": {"type": "integer", "minimum": 0},
                },
            },
        },
        "search_metadata": {"type": "object", "required": ["count"]},
    },
}

CANADA_SCHEMA = {
    "type": "object",
    "required": ["type", "features"],
    "properties": {
        "type": {"const": "FeatureCollection"},
        "features": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "geometry"],
                "properties": {
                    "geometry": {
                        "type": "object",
                        "required": ["type", "coordinates"],
                        "properties": {
                            "type": {"enum": ["Polygon", "MultiPolygon"]},
                            "coordinates": {
                                "type": "array",
                                "items": {
                                    "type": "array",
                                    "items": {"type": "array", "items": {"type": "number"}},
                                },
                            },
                        },
                    }
                },
            },
        },
    },
}


def cases():
    corpora = CORPORA
    citm = (corpora / "citm_catalog.json").read_bytes()
    twitter = (corpora / "twitter.json").read_bytes()
    canada = (corpora / "canada.json").read_bytes()
    last = citm.rfind(b'"venueCode": "PLEYEL_PLEYEL"')
    return [
        (
            # The gate's own envelope: a success/failure `oneOf` whose discriminator
            # (`outcome`) is the third member.
            "gate_envelope_119b",
            json.loads((SCHEMAS / "review-status-envelope.schema.json").read_text()),
            GATE_ENVELOPE,
            GATE_ENVELOPE.replace(b'"approved":true}', b'"approved":true,"admin_override":true}'),
        ),
        (
            "tool_result_1.4kb",
            json.loads((REPO / "fixtures/tool-result.schema.json").read_text()),
            (REPO / "fixtures/tool-result.json").read_bytes(),
            (REPO / "fixtures/tool-result-injected.json").read_bytes(),
        ),
        (
            "envelope_150b",
            json.loads((SCHEMAS / "envelope.schema.json").read_text()),
            ENVELOPE,
            ENVELOPE.replace(b'"count":3}', b'"count":3,"admin_override":true}'),
        ),
        (
            "twitter_630kb",
            TWITTER_SCHEMA,
            twitter,
            twitter.replace(b'"retweet_count": 0', b'"retweet_count": -1', 1),
        ),
        (
            "citm_catalog_1.7mb",
            json.loads((SCHEMAS / "citm_catalog.schema.json").read_text()),
            citm,
            citm[:last] + b'"venueCode": "pleyel"' + citm[last + len(b'"venueCode": "PLEYEL_PLEYEL"') :],
        ),
        ("canada_2.2mb", CANADA_SCHEMA, canada, canada.replace(b'"type":"Polygon"', b'"type":"Circle"', 1)),
    ]


def implementations(schema):
    gate = jsongate.Schema(schema, limits={"max_bytes": None})
    py = jsonschema.Draft202012Validator(schema)
    rs = jsonschema_rs.validator_for(schema)

    def loads(b):
        try:
            return jsongate.loads(b, gate) is not None
        except jsongate.JsongateError:
            return False

    return {
        "jsongate": gate.is_valid,
        "jsongate.loads": loads,
        "json+jsonschema": lambda b: py.is_valid(json.loads(b)),
        "orjson+jsonschema": lambda b: py.is_valid(orjson.loads(b)),
        "json+jsonschema-rs": lambda b: rs.is_valid(json.loads(b)),
        "orjson+jsonschema-rs": lambda b: rs.is_valid(orjson.loads(b)),
        "orjson.loads": orjson.loads,
    }


# Parsers that do not validate: timed, but not held to rejecting the mutated copies.
PARSE_ONLY = {"orjson.loads"}


def best(fn, doc, budget: float) -> float:
    """Minimum seconds per call over repeated runs within about ``budget`` seconds."""
    fn(doc)
    times = []
    spent = 0.0
    while spent < budget or len(times) < 5:
        n = 1
        start = time.perf_counter()
        fn(doc)
        t = time.perf_counter() - start
        if t < 1e-3:  # small documents: time a batch
            n = max(1, int(1e-3 / max(t, 1e-7)))
            start = time.perf_counter()
            for _ in range(n):
                fn(doc)
            t = time.perf_counter() - start
        times.append(t / n)
        spent += t
        if len(times) >= 200:
            break
    return min(times)


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that every implementation agrees")
    ap.add_argument(
        "--budget", type=float, default=1.0, help="seconds of timing per implementation and document"
    )
    args = ap.parse_args()
    rows = []
    for name, schema, doc, mutated in cases():
        assert mutated != doc, name
        impls = implementations(schema)
        for impl, fn in impls.items():
            if impl in PARSE_ONLY:
                continue
            if not fn(doc) or fn(mutated):
                print(f"FAILED: {impl} does not accept {name} and reject its mutated copy", file=sys.stderr)
                return 1
        if args.check:
            print(f"{name}: {len(impls) - len(PARSE_ONLY)} implementations accept the document and reject the mutated copy")
            continue
        times = {impl: best(fn, doc, args.budget) for impl, fn in impls.items()}
        rows.append((name, len(doc), times))
    if args.check:
        return 0
    names = list(rows[0][2])
    versions = ", ".join(
        f"{p} {metadata.version(p)}" for p in ("jsongate", "jsonschema", "jsonschema-rs", "orjson")
    )
    print(f"Python {platform.python_version()} ({platform.machine()}), {versions}")
    print()
    print("| document | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for name, size, times in rows:
        base = times["jsongate"]
        cells = [f"{fmt(t)}" + ("" if k == "jsongate" else f" ({t / base:.1f}×)") for k, t in times.items()]
        mbps = size / base / 1e6
        print(f"| {name} | " + " | ".join([f"{cells[0]} ({mbps:.0f} MB/s)"] + cells[1:]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
