"""@guard_tool_result: what a tool function returns reaches its caller only as the
contract's envelope; context comes from the call's own arguments."""

from __future__ import annotations

import asyncio
import json
import logging

import jsongate
import pytest

from support import FIXTURES

REVIEW = FIXTURES / "gate" / "review-status"
APPROVED = (REVIEW / "responses" / "approved.json").read_text()
DUPLICATE = (REVIEW / "responses" / "duplicate-approved.json").read_bytes()


def test_accepted_result_is_the_success_envelope_with_only_contract_fields():
    @jsongate.guard_tool_result(REVIEW / "contract.json", request_id=lambda change_id: "req-7")
    def review_status(change_id: str):
        return APPROVED

    assert review_status("c-42") == {
        "tool": "review_status",
        "request_id": "req-7",
        "outcome": "success",
        "data": {"change_id": "c-42", "approved": True},
    }


def test_the_call_arguments_are_the_context_so_a_mismatch_is_refused():
    @jsongate.guard_tool_result(REVIEW / "contract.json")
    def review_status(change_id: str):
        return APPROVED  # the upstream answers about c-42 whatever was asked

    env = review_status(change_id="c-1")
    assert env["outcome"] == "failure" and env["error"]["code"] == "MISMATCH"


def test_duplicate_names_in_the_upstream_bytes_are_refused_and_audited(caplog):
    @jsongate.guard_tool_result(REVIEW / "contract.json")
    def review_status(change_id: str):
        return DUPLICATE

    with caplog.at_level(logging.INFO, logger="jsongate.audit"):
        env = review_status("c-42")
    assert env["error"] == {"code": "INVALID_RESPONSE", "retryable": False}
    audit = json.loads(caplog.records[-1].getMessage())
    assert audit["error"]["kind"] == "duplicate_name"


def test_python_values_are_serialised_and_returns_selects_the_form():
    seen = []

    @jsongate.guard_tool_result(REVIEW / "contract.json", returns="result", on_audit=seen.append)
    def review_status(change_id: str):
        return {"change_id": change_id, "approved": False, "reviewer": "ana"}

    r = review_status("c-42")
    assert isinstance(r, jsongate.GateResult) and r.accepted and seen == [r]

    @jsongate.guard_tool_result(REVIEW / "contract.json", returns="output")
    def as_line(change_id: str):
        return {"change_id": change_id, "approved": False, "reviewer": "ana"}

    assert json.loads(as_line("c-42"))["data"] == {"change_id": "c-42", "approved": False}


def test_returns_raise_raises_guard_rejected_with_the_envelope():
    @jsongate.guard_tool_result(REVIEW / "contract.json", returns="raise")
    def review_status(change_id: str):
        return '{"approved": "yes"}'

    with pytest.raises(jsongate.GuardRejected) as e:
        review_status("c-42")
    assert isinstance(e.value, jsongate.JsongateError)
    assert e.value.envelope["error"]["code"] == "INVALID_RESPONSE"
    assert e.value.result.code == "INVALID_RESPONSE"


def test_a_raising_tool_becomes_upstream_unavailable_without_its_text():
    @jsongate.guard_tool_result(REVIEW / "contract.json", returns="output")
    def review_status(change_id: str):
        raise RuntimeError("secret internal detail")

    out = review_status("c-42")
    assert json.loads(out)["error"] == {"code": "UPSTREAM_UNAVAILABLE", "retryable": True}
    assert "secret" not in out

    @jsongate.guard_tool_result(REVIEW / "contract.json", catch=False)
    def strict(change_id: str):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        strict("c-42")


def test_async_tools_are_guarded_too():
    @jsongate.guard_tool_result(jsongate.Contract(REVIEW / "contract.json"))
    async def review_status(change_id: str):
        await asyncio.sleep(0)
        return APPROVED

    assert asyncio.iscoroutinefunction(review_status)
    assert asyncio.run(review_status("c-42"))["outcome"] == "success"
    assert review_status.__name__ == "review_status"


def test_bad_returns_option_is_rejected_at_decoration():
    with pytest.raises(ValueError):
        jsongate.guard_tool_result(REVIEW / "contract.json", returns="dict")
