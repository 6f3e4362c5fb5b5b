"""OpenAI Agents SDK guardrails: a tool-output guardrail that gates every result of a
function tool through a :class:`~jsongate.Contract` (or checks it against a
:class:`~jsongate.Schema`), and a tool-input guardrail that decides each call with a
:class:`~jsongate.Policy`.

Example::

    from agents import Agent, function_tool
    from jsongate import Contract, Policy
    from jsongate.agents import contract_guardrail, policy_guardrail

    @function_tool(
        tool_output_guardrails=[contract_guardrail(Contract("review-status.json"))],
        tool_input_guardrails=[policy_guardrail(Policy("policy.json"), grants=["reviews"])],
    )
    def review_status(change_id: str) -> str:
        return upstream.get(change_id)            # the upstream's raw JSON text

With a contract, the model never reads the tool's raw output: the guardrail answers
``reject_content`` with the contract's envelope in its place, whether the response was
accepted (``outcome: success`` with only the contract's fields) or not (a fixed failure
envelope). That is the SDK's way of replacing a tool output; ``output_info`` carries the
audit record. ``replace=False`` lets an accepted output through as it is (for tools that
already return only what the contract exposes).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional

from agents import (
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)

from ._guard import CallerSource, as_document, audit_log, current_caller, fixed_caller
from ._jsongate import Contract, JsongateError, Policy, Schema

__all__ = ["contract_guardrail", "policy_guardrail", "schema_guardrail"]


def _arguments(data: ToolInputGuardrailData) -> Any:
    try:
        return json.loads(data.context.tool_arguments or "{}")
    except ValueError:
        return None


def contract_guardrail(
    contract: Contract,
    *,
    replace: bool = True,
    on_reject: str = "envelope",
    name: Optional[str] = None,
) -> ToolOutputGuardrail:
    """A tool-output guardrail gating each result through ``contract``. The request id is
    the tool call's id; the request context is the call's string arguments (what the model
    asked for, which the contract's ``equals`` checks compare against). ``on_reject`` is
    ``"envelope"`` (the model reads the failure envelope) or ``"raise"`` (the run stops with
    the SDK's ``ToolOutputGuardrailTripwireTriggered``)."""
    if on_reject not in ("envelope", "raise"):
        raise ValueError(f"on_reject must be 'envelope' or 'raise', not {on_reject!r}")

    def gate(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        args = _arguments(data)
        context = (
            {k: v for k, v in (args or {}).items() if isinstance(v, str)} if isinstance(args, dict) else {}
        )
        request_id = data.context.tool_call_id or "-"
        try:
            r = contract.gate(as_document(data.output), request_id, context)
        except JsongateError:  # the call lacks a value a check needs: nothing may pass
            r = contract.refuse("INVALID_RESPONSE", "request_context", request_id, context)
        except (TypeError, ValueError):  # the output is not JSON text nor a JSON value
            r = contract.gate(b"", request_id, context)
        audit_log.info("%s", r.audit_json)
        info = {"accepted": r.accepted, "code": r.code, "audit": r.audit}
        if r.accepted:
            if replace:
                return ToolGuardrailFunctionOutput.reject_content(r.output, output_info=info)
            return ToolGuardrailFunctionOutput.allow(output_info=info)
        if on_reject == "raise":
            return ToolGuardrailFunctionOutput.raise_exception(output_info=info)
        return ToolGuardrailFunctionOutput.reject_content(r.output, output_info=info)

    return ToolOutputGuardrail(guardrail_function=gate, name=name or f"jsongate_contract_{contract.tool}")


def schema_guardrail(
    schema: Schema, *, on_reject: str = "message", name: Optional[str] = None
) -> ToolOutputGuardrail:
    """A tool-output guardrail that lets a result through only when it is strict JSON
    satisfying ``schema``; otherwise the model reads a fixed refusal text (``on_reject``
    ``"message"``) or the run stops (``"raise"``)."""
    if on_reject not in ("message", "raise"):
        raise ValueError(f"on_reject must be 'message' or 'raise', not {on_reject!r}")

    def check(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        try:
            schema.validate(as_document(data.output))
            return ToolGuardrailFunctionOutput.allow()
        except (JsongateError, TypeError, ValueError) as e:
            info = {
                "kind": getattr(e, "kind", type(e).__name__),
                "offset": getattr(e, "offset", None),
                "pointer": getattr(e, "pointer", None),
                "keyword_location": getattr(e, "keyword_location", None),
            }
        if on_reject == "raise":
            return ToolGuardrailFunctionOutput.raise_exception(output_info=info)
        return ToolGuardrailFunctionOutput.reject_content(
            "jsongate: the tool result was refused (INVALID_RESPONSE)", output_info=info
        )

    return ToolOutputGuardrail(guardrail_function=check, name=name or "jsongate_schema")


def policy_guardrail(
    policy: Policy,
    *,
    grants: Iterable[str] = (),
    workspace: Optional[str] = None,
    caller: CallerSource = None,
    name: Optional[str] = None,
) -> ToolInputGuardrail:
    """A tool-input guardrail deciding each call with ``policy`` and the session's
    ``grants``: only ``allow`` runs the tool; ``deny`` and ``ask`` (a person must approve,
    which a guardrail cannot do) answer the model with a fixed text naming the reason.

    ``caller`` is who the run acts for (see ``Policy.decide``): a :class:`~jsongate.Caller`
    (or a mapping, checked here), or a zero-argument callable returning the current one at
    each call (per-request identity, e.g. from a ``contextvars.ContextVar`` set where the
    application authenticated its user; ``None`` decides without a caller). Each decision's
    audit line (``Decision.audit_json``, with the caller's ``subject``) goes to the
    ``jsongate.audit`` logger at INFO."""
    held = list(grants)
    who = fixed_caller(caller)

    def decide(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        args = _arguments(data)
        call = {"tool": data.context.tool_name, "arguments": args if args is not None else "not JSON"}
        d = policy.decide(call, grants=held, workspace=workspace, caller=current_caller(who))
        audit_log.info("%s", d.audit_json)
        if d.allowed:
            return ToolGuardrailFunctionOutput.allow(output_info=d.record)
        return ToolGuardrailFunctionOutput.reject_content(
            f"jsongate: the call was refused ({d.reason})", output_info=d.record
        )

    return ToolInputGuardrail(guardrail_function=decide, name=name or "jsongate_policy")
