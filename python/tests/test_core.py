"""check, Schema and Validator through the installed wheel: verdicts, the exception
hierarchy and its attributes, every accepted input type, limits, and chunked feeding."""

from __future__ import annotations

import threading

import jsongate
import pytest

TOOL_RESULT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["change_id", "approved"],
    "properties": {"change_id": {"type": "string"}, "approved": {"type": "boolean"}},
}


def test_hierarchy_is_value_error_based():
    assert issubclass(jsongate.JsongateError, ValueError)
    for cls in (jsongate.ScanError, jsongate.ValidationError, jsongate.SchemaError, jsongate.ConfigError):
        assert issubclass(cls, jsongate.JsongateError)
    assert issubclass(jsongate.LimitExceeded, jsongate.ScanError)
    assert jsongate.ScanError.__module__ == "jsongate"


def test_check_accepts_strict_json_and_returns_none():
    assert jsongate.check(b'{"approved":false}') is None


def test_duplicate_name_is_rejected_after_unescaping_with_offset_and_pointer():
    with pytest.raises(jsongate.ScanError) as e:
        jsongate.check(b'{"approved":false,"\\u0061pproved":true}')
    assert e.value.kind == "duplicate_name"
    assert e.value.pointer == "/approved"
    assert e.value.offset == 32  # the closing quote of the second name
    assert (e.value.line, e.value.column) == (1, 33)
    assert e.value.limit is None
    assert not isinstance(e.value, jsongate.LimitExceeded)


@pytest.mark.parametrize(
    "doc,kind",
    [
        (b"", "syntax"),
        (b"[1,]", "syntax"),
        (b"{'a':1}", "syntax"),
        (b"NaN", "syntax"),
        (b"\xef\xbb\xbf{}", "syntax"),
        (b'"\xff"', "invalid_utf8"),
        (b'"\\ud800"', "lone_surrogate"),
    ],
)
def test_malformed_documents_raise_scan_error_with_their_kind(doc, kind):
    with pytest.raises(jsongate.ScanError) as e:
        jsongate.check(doc)
    assert e.value.kind == kind


def test_depth_limit_is_a_limit_exceeded_at_the_first_byte_past_it():
    with pytest.raises(jsongate.LimitExceeded) as e:
        jsongate.check(b"[" * 200, limits={"max_depth": 64})
    assert (e.value.kind, e.value.limit, e.value.offset) == ("too_deep", 64, 64)


def test_limits_none_lifts_a_limit_and_unknown_names_are_config_errors():
    deep = b"[" * 200 + b"]" * 200
    with pytest.raises(jsongate.LimitExceeded):
        jsongate.check(deep)
    assert jsongate.check(deep, limits={"max_depth": None}) is None
    with pytest.raises(jsongate.ConfigError) as e:
        jsongate.check(b"1", limits={"max_width": 3})
    assert e.value.kind == "limits"
    with pytest.raises(jsongate.ConfigError):
        jsongate.check(b"1", limits={"max_depth": -1})
    with pytest.raises(jsongate.ConfigError):
        jsongate.check(b"1", limits={"max_depth": True})


def test_i_json_profile_rejects_noncharacters():
    assert jsongate.check(b'"\\uFFFF"') is None
    with pytest.raises(jsongate.ScanError) as e:
        jsongate.check(b'"\\uFFFF"', limits={"i_json": True})
    assert e.value.kind == "noncharacter"


def test_default_limits_are_published():
    assert jsongate.DEFAULT_LIMITS["max_depth"] == 128
    assert set(jsongate.DEFAULT_LIMITS) == {
        "max_bytes",
        "max_depth",
        "max_name_bytes",
        "max_string_bytes",
        "max_number_bytes",
        "max_members",
        "max_items",
    }


DOC = b'{"change_id":"c-1","approved":true}'


@pytest.mark.parametrize(
    "make",
    [
        lambda: DOC,
        lambda: bytearray(DOC),
        lambda: memoryview(DOC),
        lambda: memoryview(bytearray(DOC)),
        lambda: memoryview(b"xx" + DOC + b"yy")[2:-2],  # partial view: copied
        lambda: DOC.decode(),
        lambda: memoryview(DOC).cast("c"),
    ],
    ids=[
        "bytes",
        "bytearray",
        "memoryview",
        "memoryview-bytearray",
        "memoryview-slice",
        "str",
        "memoryview-cast",
    ],
)
def test_every_input_type_gives_the_same_verdicts(make):
    s = jsongate.Schema(TOOL_RESULT)
    assert s.validate(make()) is None
    assert s.is_valid(make())
    bad = bytes(make()) if not isinstance(make(), str) else make().encode()
    bad = bad.replace(b"true", b"1")
    assert not s.is_valid(bad)
    assert not s.is_valid(type(make())(bad) if isinstance(make(), (bytes, bytearray)) else bad)


def test_parsed_values_are_validated_and_other_objects_are_type_errors():
    s = jsongate.Schema(TOOL_RESULT)
    # Already parsed JSON values are validated as their text would be (test_loads.py has
    # the differential test); the tool-result schema wants an object.
    for x in (5, None, [1], 1.5, True):
        with pytest.raises(jsongate.ValidationError):
            s.validate(x)
    for x in (object(), {1, 2}, b"x".decode):
        with pytest.raises(TypeError):
            s.validate(x)
    with pytest.raises(TypeError):
        jsongate.check(7)
    with pytest.raises(TypeError):
        jsongate.check({"a": 1})


def test_str_with_lone_surrogate_is_a_unicode_error_not_a_verdict():
    with pytest.raises(UnicodeEncodeError):
        jsongate.check('"\ud800"')


def test_violation_carries_keyword_locations_pointer_and_offset():
    s = jsongate.Schema(TOOL_RESULT)
    with pytest.raises(jsongate.ValidationError) as e:
        s.validate(b'{"change_id":"c-1","admin_override":true}')
    v = e.value
    assert v.kind == "schema"
    assert v.keyword == "additionalProperties"
    assert v.keyword_location == "/additionalProperties"
    assert v.absolute_keyword_location.endswith("#/additionalProperties")
    assert v.pointer == "/admin_override"
    assert v.offset == 19  # decided at the name, before its value is read
    assert (v.line, v.column) == (1, 20)
    # The message names the unexpected member (what a person acts on), never a value.
    assert 'property "admin_override" is not allowed' in v.message
    assert "true" not in str(v)


def test_violation_through_ref_names_the_path_through_the_schema():
    s = jsongate.Schema({"$defs": {"id": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/id"}}})
    with pytest.raises(jsongate.ValidationError) as e:
        s.validate(b'{"a":1}')
    assert e.value.keyword_location == "/properties/a/$ref/type"
    assert e.value.pointer == "/a"


def test_schema_may_be_text_bytes_dict_or_bool():
    for schema in (TOOL_RESULT, '{"type":"object"}', b'{"type":"object"}', True):
        assert jsongate.Schema(schema).is_valid(DOC)
    assert not jsongate.Schema(False).is_valid(b"1")


def test_invalid_schema_is_a_schema_error_with_location():
    with pytest.raises(jsongate.SchemaError) as e:
        jsongate.Schema({"type": 12})
    assert e.value.kind == "invalid"
    with pytest.raises(jsongate.SchemaError):
        jsongate.Schema('{"type":')
    with pytest.raises(jsongate.SchemaError) as e:
        jsongate.Schema({"$ref": "https://example.com/not-registered.json"})
    assert "example.com" in str(e.value)


def test_compile_budget_is_a_schema_error_of_kind_budget():
    chain = {"$defs": {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(1500)}, "$ref": "#/$defs/d0"}
    chain["$defs"]["d1500"] = {"type": "string"}
    with pytest.raises(jsongate.SchemaError) as e:
        jsongate.Schema(chain)
    assert (e.value.kind, e.value.budget, e.value.limit) == ("budget", "ref_depth", 1000)


def test_draft_option_applies_to_schemas_without_dollar_schema():
    # draft-07 ignores prefixItems; 2020-12 checks it.
    schema = {"prefixItems": [{"type": "string"}]}
    assert not jsongate.Schema(schema).is_valid(b"[1]")
    assert jsongate.Schema(schema, draft="7").is_valid(b"[1]")
    assert jsongate.Schema({"items": [{"type": "string"}]}, draft="draft-07").is_valid(b'["a", 1]')
    assert not jsongate.Schema({"items": [{"type": "string"}]}, draft="draft-07").is_valid(b"[1]")
    # draft-04: a boolean exclusiveMaximum.
    d4 = {"type": "integer", "maximum": 3, "exclusiveMaximum": True}
    assert jsongate.Schema(d4, draft="4").is_valid(b"2")
    assert not jsongate.Schema(d4, draft="draft-04").is_valid(b"3")
    with pytest.raises(jsongate.ConfigError):
        jsongate.Schema(schema, draft="3")


def test_format_is_an_annotation_unless_asserted():
    schema = {"format": "date-time"}
    assert jsongate.Schema(schema).is_valid(b'"yesterday"')
    assert not jsongate.Schema(schema, format_assertion=True).is_valid(b'"yesterday"')
    assert jsongate.Schema(schema, format_assertion=True).is_valid(b'"2024-06-01T12:00:00Z"')


def test_resources_are_the_only_documents_refs_reach():
    s = jsongate.Schema(
        {"$ref": "https://example.com/id.json"},
        resources={"https://example.com/id.json": {"type": "string"}},
    )
    assert s.is_valid(b'"x"')
    assert not s.is_valid(b"1")


def test_eval_budget_stops_work_with_limit_exceeded():
    s = jsongate.Schema({"items": {"allOf": [{"type": "integer"}, {"minimum": 0}]}}, eval_budget=1000)
    doc = b"[" + b"0," * 1000 + b"0]"
    with pytest.raises(jsongate.LimitExceeded) as e:
        s.validate(doc)
    assert (e.value.kind, e.value.limit) == ("budget_exceeded", 1000)


def test_schema_limits_are_defaults_that_calls_override():
    s = jsongate.Schema(True, limits={"max_bytes": 10})
    with pytest.raises(jsongate.LimitExceeded) as e:
        s.validate(b'"0123456789abc"')
    assert (e.value.kind, e.value.offset) == ("too_large", 10)
    assert s.is_valid(b'"0123456789abc"', limits={"max_bytes": 100})


def test_iter_errors_lists_violations_in_document_order():
    s = jsongate.Schema({"items": {"type": "integer"}, "maxItems": 2})
    errs = list(s.iter_errors(b'[1,"a",2,"b"]'))
    assert all(isinstance(e, jsongate.ValidationError) for e in errs)
    assert (errs[0].keyword, errs[0].pointer, errs[0].offset) == ("type", "/1", 3)
    assert [(e.keyword, e.pointer, e.offset) for e in errs] == [
        ("type", "/1", 3), ("maxItems", "", 7), ("type", "/3", 9)]
    assert list(s.iter_errors(b"[1,2]")) == []
    two = list(s.iter_errors(b'["a","b","c"]', max_errors=2))
    assert [(e.keyword, e.pointer) for e in two] == [("type", "/0"), ("type", "/1")]


def test_iter_errors_raises_for_a_document_that_is_not_json():
    with pytest.raises(jsongate.ScanError):
        list(jsongate.Schema(True).iter_errors(b"[1,"))


def test_validator_gives_the_one_shot_verdict_at_every_split():
    s = jsongate.Schema(TOOL_RESULT)
    docs = [
        DOC,
        b'{"change_id":"c-1","approved":"yes"}',
        b'{"change_id":"c-1","approved":true,"approved":false}',
        b'{"change_id":"\\u00e9"',
        b' "x" ',
    ]
    for doc in docs:
        try:
            s.validate(doc)
            want = None
        except jsongate.JsongateError as e:
            want = (type(e), e.kind, e.offset, e.pointer)
        v = s.validator()
        for cut in range(len(doc) + 1):
            for chunk in (doc[:cut], doc[cut:]):
                v.feed(chunk)
            try:
                v.finish()
                got = None
            except jsongate.JsongateError as e:
                got = (type(e), e.kind, e.offset, e.pointer)
            assert got == want, (doc, cut)


def test_validator_feed_reports_when_the_verdict_is_decided():
    v = jsongate.Schema(TOOL_RESULT).validator()
    assert v.feed(b'{"change_id":"c-1",') is True
    assert v.feed(b'"admin":1') is False  # rejected at the name
    assert v.feed(b"anything after the verdict is not read") is False
    assert v.bytes_read == 26
    with pytest.raises(jsongate.ValidationError) as e:
        v.finish()
    assert e.value.pointer == "/admin"
    # Ready for the next document.
    v.feed(DOC)
    assert v.finish() is None


def test_validator_reset_drops_the_document_in_progress():
    v = jsongate.Validator(jsongate.Schema(TOOL_RESULT), limits={"max_bytes": 1000})
    v.feed(b'{"change')
    v.reset()
    assert v.bytes_read == 0
    v.feed(DOC)
    assert v.finish() is None


def test_validator_limits_apply_across_chunks():
    v = jsongate.Schema(True).validator(limits={"max_bytes": 8})
    assert v.feed(b"[1,2,") is True
    assert v.feed(b"3,4,5]") is False
    with pytest.raises(jsongate.LimitExceeded) as e:
        v.finish()
    assert (e.value.kind, e.value.offset) == ("too_large", 8)


def _ticks_in_the_middle_of_calls(validate, doc) -> list:
    """How many ticks of another Python thread fall in the middle 40% of each of five calls
    of ``validate(doc)``. With the interpreter lock held through a call, none can, or one or
    two at most (the other thread gets the lock at the call's edges, within the switch
    interval, and may tick once more there if the system parks it meanwhile); with it
    released, the other thread ticks thousands of times. On a loaded machine the wait for
    the lock at a call's start counts in that call's time, so a call can show ticks that
    happened before it began: a test of a held lock reads the quietest call."""
    import sys
    import time

    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    t = threading.Thread(target=tick)
    t.start()
    calls = []
    try:
        time.sleep(0.01)
        for _ in range(5):
            start = time.perf_counter()
            assert validate(doc)
            calls.append((start, time.perf_counter()))
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    middle = []
    for a, b in calls:
        margin = 0.3 * (b - a)
        middle.append(sum(1 for x in ticks if a + margin < x < b - margin))
    return middle


def test_large_bytes_are_validated_with_the_gil_released():
    s = jsongate.Schema({"type": "array", "items": {"type": "integer"}})
    doc = b"[" + b"1," * 900_000 + b"1]"  # within max_items
    assert len(doc) > jsongate.RELEASE_GIL_AT
    assert sum(_ticks_in_the_middle_of_calls(s.is_valid, doc)) >= 5


def test_a_bytearray_is_read_with_the_gil_held():
    # Nothing may write to it while the scanner reads it in place.
    s = jsongate.Schema({"type": "array", "items": {"type": "integer"}})
    doc = bytearray(b"[" + b"1," * 900_000 + b"1]")
    assert min(_ticks_in_the_middle_of_calls(s.is_valid, doc)) < 5


def test_schema_is_shared_between_threads():
    s = jsongate.Schema(TOOL_RESULT)
    bad = b'{"change_id":"c-1","approved":1}'
    results = []

    def work():
        results.append(all(s.is_valid(DOC) and not s.is_valid(bad) for _ in range(200)))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 8


def test_the_installed_package_is_tested_not_the_source_folder():
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "jsongate"
    assert Path(jsongate.__file__).resolve().parent != here
    assert Path(jsongate._jsongate.__file__).name.startswith("_jsongate")


def test_the_package_version_is_the_binding_crates():
    import re
    from pathlib import Path

    cargo = (Path(__file__).resolve().parents[1] / "Cargo.toml").read_text()
    assert jsongate.__version__ == re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
    engine = (Path(__file__).resolve().parents[2] / "Cargo.toml").read_text()
    assert jsongate.ENGINE_VERSION == re.search(r'^version = "([^"]+)"', engine, re.M).group(1)
