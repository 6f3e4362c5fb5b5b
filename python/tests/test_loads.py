"""`jsongate.loads`: Python objects from the same pass that checks and validates, and
`Schema.validate`/`is_valid`/`iter_errors` on already parsed values.

The oracle is the standard library: on every document it accepts (and jsongate's strict
profile accepts), `loads` must return what `json.loads` returns; with a schema, the verdict
must be the one `Schema.validate` gives for the same bytes."""

from __future__ import annotations

import decimal
import gc
import json
import math
import random

import pytest

import jsongate
from support import FIXTURES


def random_value(rng: random.Random, depth: int = 0):
    kinds = ["int", "bigint", "float", "str", "bool", "null"]
    if depth < 4:
        kinds += ["list", "dict"] * 2
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.randint(-(10**18), 10**18)
    if kind == "bigint":
        return rng.choice([-1, 1]) * rng.randint(10**18, 10**40)
    if kind == "float":
        return rng.choice([0.0, -0.0, 1.5, 1e-300, 2.5e300, rng.uniform(-1e9, 1e9), rng.random()])
    if kind == "str":
        alphabet = "abcxyz \"\\/\n\t\u00e9\u4e2d\U0001f600\u2028"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {f"k{rng.randint(0, 30)}\u00e9"[: rng.randint(1, 4)]: random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def test_loads_agrees_with_json_loads_on_random_documents():
    rng = random.Random(20261207)
    for i in range(3000):
        value = random_value(rng)
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1]))
        got = jsongate.loads(text.encode())
        want = json.loads(text)
        assert got == want, (i, text)
        # Floats keep their sign and exact value; ints stay ints.
        assert json.dumps(got) == json.dumps(want), (i, text)
        assert jsongate.loads(text) == want
        assert jsongate.loads(bytearray(text.encode())) == want
        assert jsongate.loads(memoryview(text.encode())) == want


@pytest.mark.parametrize(
    "text",
    [
        "0",
        "-0",
        "-0.0",
        "1e400",
        "-1e400",
        "1E2",
        "123456789012345678",
        "1234567890123456789",
        "-9223372036854775808",
        "18446744073709551615",
        "184467440737095516150",
        "-184467440737095516150",
        "0.1",
        "5e-324",
        '"\\ud83d\\ude00"',
        "[]",
        "{}",
        '{"a":{"a":{"a":[]}}}',
    ],
)
def test_number_and_edge_cases_match_json_loads(text):
    got, want = jsongate.loads(text), json.loads(text)
    assert got == want and type(got) is type(want)
    if isinstance(want, float):
        assert math.copysign(1, got) == math.copysign(1, want)


def test_decimal_keeps_the_exact_text():
    got = jsongate.loads(b'{"price": 10.10, "n": 3, "e": 1E-2, "big": 1e400}', decimal=True)
    assert got == {
        "price": decimal.Decimal("10.10"),
        "n": 3,
        "e": decimal.Decimal("1E-2"),
        "big": decimal.Decimal("1e400"),
    }
    assert str(got["price"]) == "10.10"
    assert json.loads(b"[10.10]", parse_float=decimal.Decimal) == jsongate.loads(b"[10.10]", decimal=True)


def test_names_are_shared_strings():
    docs = jsongate.loads(b'[{"name":1},{"name":2}]')
    assert docs[0].keys() == docs[1].keys()
    (a,), (b,) = docs[0].keys(), docs[1].keys()
    assert a is b
    # A later call reuses them too (the cache outlives the call).
    (c,) = jsongate.loads(b'{"name":3}').keys()
    assert c is a


@pytest.mark.parametrize(
    "doc,kind,pointer,offset",
    [
        (b'{"approved":false,"approved":true}', "duplicate_name", "/approved", 27),
        (b"[1,2,]", "syntax", "", 5),
        (b'["\xff"]', "invalid_utf8", "/0", 2),
        (b"[1] [2]", "syntax", "", 4),
        (b"", "syntax", "", 0),
    ],
)
def test_malformed_documents_raise_what_check_raises(doc, kind, pointer, offset):
    with pytest.raises(jsongate.ScanError) as loads_err:
        jsongate.loads(doc)
    with pytest.raises(jsongate.ScanError) as check_err:
        jsongate.check(doc)
    e = loads_err.value
    assert (e.kind, e.pointer, e.offset) == (kind, pointer, offset)
    c = check_err.value
    assert (c.kind, c.pointer, c.offset) == (e.kind, e.pointer, e.offset)


def test_limits_apply_and_default_to_the_schemas():
    with pytest.raises(jsongate.LimitExceeded) as err:
        jsongate.loads(b"[[[[1]]]]", limits={"max_depth": 3})
    assert err.value.kind == "too_deep"
    schema = jsongate.Schema(True, limits={"max_items": 2})
    with pytest.raises(jsongate.LimitExceeded) as err:
        jsongate.loads(b"[1,2,3]", schema)
    assert err.value.kind == "too_many_items"
    assert jsongate.loads(b"[1,2,3]", schema, limits={"max_items": 3}) == [1, 2, 3]
    # A scanner kept from a call with other limits is not reused with them.
    assert jsongate.loads(b"[[[[1]]]]") == [[[[1]]]]


SCHEMA = jsongate.Schema(
    {
        "type": "object",
        "additionalProperties": False,
        "required": ["id"],
        "properties": {"id": {"type": "string"}, "n": {"type": "integer", "maximum": 5}},
    }
)


@pytest.mark.parametrize(
    "doc",
    [
        b'{"id":"a"}',
        b'{"id":"a","n":5}',
        b'{"id":"a","n":6}',
        b'{"n":1}',
        b'{"id":"a","admin_override":true}',
        b'{"id":1}',
        b"[]",
        b'{"id":"a","id":"b"}',
    ],
)
def test_loads_with_a_schema_gives_the_validators_verdict(doc):
    try:
        SCHEMA.validate(doc)
        want = None
    except jsongate.JsongateError as e:
        want = e
    if want is None:
        assert jsongate.loads(doc, SCHEMA) == json.loads(doc)
        return
    with pytest.raises(type(want)) as err:
        jsongate.loads(doc, SCHEMA)
    got = err.value
    assert (got.kind, got.pointer, got.offset) == (want.kind, want.pointer, want.offset)
    if isinstance(want, jsongate.ValidationError):
        assert got.keyword_location == want.keyword_location


def test_a_violation_stops_reading_at_the_deciding_byte():
    # The tail is not even well-formed: the verdict came before it.
    with pytest.raises(jsongate.ValidationError) as err:
        jsongate.loads(b'{"id":"a","admin_override":tru]]]', SCHEMA)
    assert err.value.pointer == "/admin_override"


def test_a_schema_that_passes_early_still_builds_the_whole_document():
    assert jsongate.loads(b'{"a":[1,{"b":null}]}', jsongate.Schema(True)) == {"a": [1, {"b": None}]}
    with pytest.raises(jsongate.ScanError):
        jsongate.loads(b'{"a":[1,{"b":null}]', jsongate.Schema(True))


def test_the_gate_fixtures_load_as_json_loads_does():
    for path in sorted(FIXTURES.glob("gate/*/responses/*.json")):
        data = path.read_bytes()
        try:
            want = json.loads(data)
        except ValueError:
            continue
        try:
            jsongate.check(data)
        except jsongate.ScanError:
            continue
        assert jsongate.loads(data) == want, path


def test_the_collector_is_resumed_after_a_large_document_even_on_errors():
    big = b"[" + b",".join(b'{"a":[1,2,3]}' for _ in range(2000)) + b"]"
    assert gc.isenabled()
    assert len(jsongate.loads(big)) == 2000
    assert gc.isenabled()
    with pytest.raises(jsongate.ScanError):
        jsongate.loads(big[:-1])
    assert gc.isenabled()
    gc.disable()
    try:
        jsongate.loads(big)
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_wrong_input_types_are_type_errors():
    with pytest.raises(TypeError):
        jsongate.loads(12)
    with pytest.raises(TypeError):
        jsongate.loads({"a": 1})


# Already parsed values: the same verdict, keyword and pointer as their text.


@pytest.mark.parametrize(
    "value",
    [
        {"id": "a"},
        {"id": "a", "n": 6},
        {"n": 1},
        {"id": "a", "admin_override": True},
        {"id": 1.5},
        [],
        ("a",),
        None,
        True,
        3,
        2.5,
    ],
)
def test_parsed_values_get_the_verdict_of_their_text(value):
    text = json.dumps(value, separators=(",", ":"))
    assert SCHEMA.is_valid(value) == SCHEMA.is_valid(text)
    errors = [(e.keyword_location, e.pointer) for e in SCHEMA.iter_errors(value)]
    assert errors == [(e.keyword_location, e.pointer) for e in SCHEMA.iter_errors(text)]
    if errors:
        with pytest.raises(jsongate.ValidationError) as err:
            SCHEMA.validate(value)
        assert (err.value.keyword_location, err.value.pointer) == errors[0]
    else:
        SCHEMA.validate(value)


def test_parsed_values_that_json_cannot_hold_are_refused():
    with pytest.raises(ValueError):
        SCHEMA.validate({"id": float("nan")})
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError):
        SCHEMA.validate(loop)
    with pytest.raises(TypeError):
        SCHEMA.validate({"id": object()})


def test_limits_apply_to_parsed_values():
    deep = [[[[[1]]]]]
    with pytest.raises(jsongate.LimitExceeded) as err:
        jsongate.Schema(True).validate(deep, limits={"max_depth": 3})
    assert err.value.kind == "too_deep"
