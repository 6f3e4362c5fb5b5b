"""Policy.decide for a caller (``jsongate.Caller`` or a mapping): the caller's scopes held as
grants, its subject and client id as the policy's context values, rate limits counted per
subject, the subject in the audit line; bad callers are ``ConfigError``s of kind
``"caller"``."""

from __future__ import annotations

import json

import jsongate
import pytest

POLICY = {
    "policy": 1,
    "tools": {
        "close_ticket": {"arguments": True, "requires": ["tickets:write"]},
        "get_account": {
            "arguments": {"type": "object", "properties": {"account": {"type": "string"}}},
            "requires": [],
            "rules": [{"rule": "equals_context", "pointer": "/account", "context": "subject"}],
        },
        "app_report": {
            "arguments": True,
            "requires": [],
            "rules": [{"rule": "equals_context", "pointer": "/app", "context": "client_id"}],
        },
        "export": {
            "arguments": True,
            "requires": [],
            "rate_limit": {"calls": 1, "window_seconds": 60},
        },
    },
}

ALICE = jsongate.Caller("alice", "app-1", ["tickets:write"])
BOB = jsongate.Caller("bob", scopes=("tickets:read",))


def policy():
    return jsongate.Policy(POLICY)


def test_a_capability_only_the_callers_scope_grants():
    p, call = policy(), {"tool": "close_ticket"}
    d = p.decide(call, caller=ALICE)
    assert (d.verdict, d.reason) == ("allow", "ok")
    assert d.record["grant"] == ["tickets:write"]
    d = p.decide(call)
    assert (d.verdict, d.reason) == ("deny", "grant_missing")
    assert p.decide(call, caller=BOB).reason == "grant_missing"
    # Scopes are held besides the session's grants, not instead of them.
    assert p.decide(call, grants=["tickets:write"], caller=BOB).allowed
    assert p.decide(call, grants=["x"], caller=ALICE).record["grant"] == ["x", "tickets:write"]


def test_a_mapping_is_a_caller_too():
    p = policy()
    d = p.decide({"tool": "close_ticket"}, caller={"subject": "alice", "scopes": ["tickets:write"]})
    assert (d.allowed, d.subject) == (True, "alice")
    assert not p.decide({"tool": "close_ticket"}, caller={"subject": "alice"}).allowed
    assert not p.decide({"tool": "close_ticket"}, caller=None).allowed


def test_equals_context_binds_an_argument_to_the_callers_subject():
    p = policy()
    mine = {"tool": "get_account", "arguments": {"account": "alice"}}
    theirs = {"tool": "get_account", "arguments": {"account": "bob"}}
    assert p.decide(mine, caller=ALICE).allowed
    d = p.decide(theirs, caller=ALICE)
    assert (d.verdict, d.reason) == ("deny", "context_mismatch")
    assert d.rule_failures == [("context_mismatch", "/account")]
    assert p.decide(theirs, caller=BOB).allowed
    # Without a caller there is no subject to equal: denied, whatever the account.
    assert p.decide(mine).reason == "context_mismatch"


def test_equals_context_binds_an_argument_to_the_callers_client():
    p = policy()
    call = {"tool": "app_report", "arguments": {"app": "app-1"}}
    assert p.decide(call, caller=ALICE).allowed
    assert p.decide(call, caller=BOB).reason == "context_mismatch"  # bob's client is unknown
    assert p.decide(call, caller=jsongate.Caller("carol", "app-2")).reason == "context_mismatch"


def test_rate_limits_count_per_subject():
    p, call = policy(), {"tool": "export"}
    got = [
        (who, p.decide(call, now_ms=1000 + i, caller=jsongate.Caller(who)).reason)
        for i, who in enumerate(["alice", "alice", "bob", "bob", "alice"])
    ]
    assert got == [
        ("alice", "ok"),
        ("alice", "rate_limited"),
        ("bob", "ok"),  # a budget of its own
        ("bob", "rate_limited"),
        ("alice", "rate_limited"),
    ]
    # Calls without a caller count apart from every subject's.
    assert [p.decide(call, now_ms=1010 + i).reason for i in range(2)] == ["ok", "rate_limited"]
    # The scopes and client do not make another budget: the subject does.
    assert p.decide(call, now_ms=1020, caller=ALICE).reason == "rate_limited"
    # The window ends for everyone.
    assert p.decide(call, now_ms=1000 + 60_001, caller=jsongate.Caller("alice")).allowed


def test_the_audit_line_names_the_subject_and_the_record_stays_a_decision_record():
    p = policy()
    d = p.decide({"tool": "close_ticket"}, caller=ALICE)
    assert d.subject == "alice"
    assert "subject" not in d.record and "app-1" not in d.to_json()
    audit = json.loads(d.audit_json)
    assert audit == {**d.record, "subject": "alice"}
    assert list(audit)[-1] == "subject"
    plain = p.decide({"tool": "close_ticket"})
    assert (plain.subject, plain.audit_json) == (None, plain.to_json())
    # A subject needing escapes stays one JSON string.
    odd = p.decide({"tool": "export"}, caller=jsongate.Caller('a"b\\c é'))
    assert json.loads(odd.audit_json)["subject"] == 'a"b\\c é'


def test_caller_values_and_equality():
    c = jsongate.Caller("alice", scopes=iter(["a", "b", "a"]))
    assert (c.subject, c.client_id, c.scopes) == ("alice", None, ("a", "b"))
    assert c == jsongate.Caller("alice", None, ["a", "b"])
    assert hash(c) == hash(jsongate.Caller("alice", None, ("a", "b")))
    assert c != jsongate.Caller("alice", "app", ["a", "b"])
    assert repr(ALICE) == "jsongate.Caller(subject='alice', client_id='app-1', scopes=('tickets:write',))"
    given = {"subject": "alice", "client_id": "app-1", "scopes": ["tickets:write"]}
    assert jsongate.Caller.from_mapping(given) == ALICE
    assert jsongate.Caller.from_mapping(ALICE) == ALICE
    assert jsongate.Caller("é" * 256).subject == "é" * 256  # characters, not bytes
    assert jsongate.Caller("x", scopes=["https://api.example/.default", "a:b!#$~"]).scopes[1] == "a:b!#$~"
    with pytest.raises(AttributeError):
        ALICE.subject = "mallory"  # frozen


@pytest.mark.parametrize(
    "args,kwargs",
    [
        (("",), {}),
        (("x" * 257,), {}),
        (("a\nb",), {}),
        (("a\x00",), {}),
        (("a\u0085b",), {}),  # a C1 control character
        ((7,), {}),
        ((None,), {}),
        ((b"alice",), {}),
        (("alice",), {"client_id": ""}),
        (("alice",), {"client_id": 7}),
        (("alice",), {"client_id": "a\tb"}),
        (("alice",), {"scopes": "tickets:write"}),  # a str, not an iterable of str
        (("alice",), {"scopes": 7}),
        (("alice",), {"scopes": [7]}),
        (("alice",), {"scopes": [""]}),
        (("alice",), {"scopes": ["two words"]}),
        (("alice",), {"scopes": ['quo"te']}),
        (("alice",), {"scopes": ["back\\slash"]}),
        (("alice",), {"scopes": ["é"]}),
    ],
)
def test_bad_callers_are_config_errors(args, kwargs):
    with pytest.raises(jsongate.ConfigError) as e:
        jsongate.Caller(*args, **kwargs)
    assert (e.value.kind, e.value.offset, e.value.pointer) == ("caller", None, None)
    # The message names the field, never the value.
    if args and isinstance(args[0], str) and args[0] not in ("", "alice"):
        assert args[0] not in str(e.value)


@pytest.mark.parametrize(
    "caller",
    [
        {"subject": "alice", "token": "eyJ-secret"},
        {},
        {"client_id": "app-1"},
        {"subject": ""},
        {"subject": "alice", "scopes": "tickets:write"},
        {7: "alice"},
        "alice",
        42,
        ["alice"],
    ],
)
def test_bad_callers_given_to_decide_are_config_errors(caller):
    p = policy()
    with pytest.raises(jsongate.ConfigError) as e:
        p.decide({"tool": "export"}, caller=caller)
    assert e.value.kind == "caller"
    assert "eyJ-secret" not in str(e.value)  # a key is named, never a value
    with pytest.raises(jsongate.ConfigError) as e:
        jsongate.Caller.from_mapping(caller)
    assert e.value.kind == "caller"
    # Refused before deciding: nothing was counted.
    assert p.decide({"tool": "export"}, now_ms=0).allowed


def test_caller_is_keyword_only():
    with pytest.raises(TypeError):
        policy().decide({"tool": "export"}, [], None, None, ALICE)
