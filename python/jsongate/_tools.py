"""What the MCP guards share, free of any framework: the tool definitions a server listed
(screened, pinned, their schemas compiled once), and the checks of one call's arguments and
one call's result.

A server's tool list is as untrusted as its results: a definition with instruction-like or
hidden text is dropped (or only logged), and a definition that changed since it was first
seen in a way that may let more through (a widened input, a weakened output promise, an
unclassified change) is dropped until someone looks at it."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._guard import CallerLike, as_document, audit_log
from ._jsongate import (
    Contract,
    GateResult,
    JsongateError,
    Policy,
    ScanError,
    Schema,
    ToolDefinition,
    ValidationError,
    screen,
)

log = logging.getLogger("jsongate.guard")

#: The fixed text the agent reads in place of a refused result (never upstream text).
REFUSED_TEXT = "jsongate: the {what} was refused ({code})"


@dataclass
class Refusal:
    """Why something was refused: a closed ``code``, and details for operators."""

    code: str
    detail: str
    what: str = "tool result"

    @property
    def text(self) -> str:
        """What the agent may be told: the code, never the detail."""
        return REFUSED_TEXT.format(what=self.what, code=self.code)


@dataclass
class _Tool:
    definition: ToolDefinition
    arguments: Optional[Schema]
    output: Optional[Schema]


@dataclass
class ToolRules:
    """The checks, per server session.

    ``contracts`` maps tool names to :class:`Contract`\\ s: such a tool's result is gated and
    replaced by the contract's envelope. ``screen_tools`` is ``"drop"`` (the default),
    ``"flag"`` (log only) or ``None`` for tool definitions with instruction-like or hidden
    text; ``pin`` drops a tool whose definition changed dangerously since it was first
    listed; ``screen_results`` is ``None`` (the default), ``"flag"`` or ``"reject"`` for
    results with instruction-like text. ``limits`` apply to arguments and results.

    ``policy``, when given, decides each call whose arguments passed (last, so a call that
    is never sent never counts against a rate limit) with ``grants``, ``workspace`` and the
    caller :meth:`check_call` is given; only ``allow`` is sent (``ask`` is refused: no one
    can be asked here). Its audit line goes to the ``jsongate.audit`` logger."""

    contracts: Mapping[str, Contract] = field(default_factory=dict)
    screen_tools: Optional[str] = "drop"
    pin: bool = True
    screen_results: Optional[str] = None
    limits: Optional[Dict[str, Any]] = None
    format_assertion: bool = False
    policy: Optional[Policy] = None
    grants: Sequence[str] = ()
    workspace: Optional[str] = None
    tools: Dict[str, _Tool] = field(default_factory=dict)
    pins: Dict[str, ToolDefinition] = field(default_factory=dict)
    refused_tools: Dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for opt, allowed in (
            ("screen_tools", ("drop", "flag", None)),
            ("screen_results", ("reject", "flag", None)),
        ):
            if getattr(self, opt) not in allowed:
                raise ValueError(f"{opt} must be one of {allowed}, not {getattr(self, opt)!r}")

    # --- tool lists -------------------------------------------------------------------

    def admit(self, definition: Mapping[str, Any]) -> Optional[str]:
        """Reads one listed definition (``name``, ``inputSchema``, ``outputSchema``, …, as
        on the wire). Returns ``None`` when the tool may be offered, else why not."""
        try:
            d = ToolDefinition(dict(definition))
        except JsongateError as e:
            return self._refuse_tool(str(definition.get("name", "?")), f"unreadable definition: {e}")
        name = d.name
        if self.screen_tools:
            found = d.screen()
            if found:
                what = ", ".join(f"{p} at {ptr or '/'}" for ptr, p in found)
                if self.screen_tools == "drop":
                    return self._refuse_tool(name, f"instruction-like text in its definition: {what}")
                log.warning("tool %r: instruction-like text in its definition: %s", name, what)
        if self.pin:
            pinned = self.pins.get(name)
            if pinned is None:
                self.pins[name] = d
            elif pinned.sha256 != d.sha256:
                changes = d.changes_since(pinned)
                risky = [c for c in changes if c["dangerous"]]
                if risky:
                    what = ", ".join(f"{c['kind']} at {c['pointer']}" for c in risky)
                    return self._refuse_tool(name, f"definition changed since it was pinned: {what}")
                log.info(
                    "tool %r: harmless changes since it was pinned: %s", name, [c["kind"] for c in changes]
                )
        try:
            self.tools[name] = _Tool(
                definition=d,
                arguments=self._compile(definition.get("inputSchema")),
                output=self._compile(definition.get("outputSchema")),
            )
        except JsongateError as e:
            return self._refuse_tool(name, f"its schema does not compile: {e}")
        self.refused_tools.pop(name, None)
        return None

    def _compile(self, schema: Any) -> Optional[Schema]:
        if schema is None:
            return None
        return Schema(schema, format_assertion=self.format_assertion, limits=self.limits)

    def _refuse_tool(self, name: str, why: str) -> str:
        log.warning("tool %r refused: %s", name, why)
        self.tools.pop(name, None)
        self.refused_tools[name] = why
        return why

    def known(self, name: str) -> bool:
        return name in self.tools

    def output_schema_of(self, name: str) -> Optional[Dict[str, Any]]:
        """The output schema to list for ``name`` when a contract gates it: the contract's
        envelope schema (both of its shapes are objects; ``"type": "object"`` is said at the
        root too, as MCP's older protocol versions require)."""
        c = self.contracts.get(name)
        return {"type": "object", **json.loads(c.envelope_schema)} if c is not None else None

    # --- calls ------------------------------------------------------------------------

    def check_call(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]],
        caller: Optional[CallerLike] = None,
    ) -> Optional[Refusal]:
        """``None`` when the call may be sent: the tool was listed and admitted, the
        arguments satisfy its ``inputSchema``, and the policy (if any) allows it for
        ``caller``."""
        if name in self.refused_tools:
            return Refusal("TOOL_REFUSED", self.refused_tools[name], "call")
        tool = self.tools.get(name)
        if tool is None:
            return Refusal("TOOL_UNKNOWN", f"tool {name!r} was not listed", "call")
        if tool.arguments is not None:
            try:
                tool.arguments.validate(json.dumps(arguments or {}, ensure_ascii=False, allow_nan=False))
            except (ValidationError, ScanError) as e:
                return Refusal("ARGUMENTS_INVALID", f"{type(e).__name__}: {e}", "call")
            except ValueError as e:  # NaN or infinity in the arguments: not JSON
                return Refusal("ARGUMENTS_INVALID", str(e), "call")
        if self.policy is None:
            return None
        try:
            d = self.policy.decide(
                {"tool": name, "arguments": dict(arguments or {})},
                grants=list(self.grants),
                workspace=self.workspace,
                caller=caller,
            )
        except ValueError as e:  # not JSON, or past the policy's limits; a bad caller raises
            if getattr(e, "kind", "call") != "call":
                raise
            return Refusal("ARGUMENTS_INVALID", f"the policy cannot read the call: {e}", "call")
        audit_log.info("%s", d.audit_json)
        if d.allowed:
            return None
        return Refusal(d.reason, f"the policy answers {d.verdict}: {d.reason}", "call")

    def check_result(
        self,
        name: str,
        request_id: str,
        structured: Optional[Mapping[str, Any]],
        texts: List[str],
        is_error: bool,
        context: Optional[Mapping[str, str]] = None,
    ) -> Union[Refusal, GateResult, None]:
        """Checks one result. Returns a :class:`GateResult` to send in its place (the tool
        has a contract: accepted or not, the agent gets the envelope), a :class:`Refusal`, or
        ``None`` when the result may pass as it is."""
        contract = self.contracts.get(name)
        if contract is not None:
            if is_error:
                return contract.failure("UPSTREAM_UNAVAILABLE", request_id, context)
            # One text block is the upstream's own text (a tool returning a string): it is
            # gated as it is, duplicate names and all. Otherwise the structured content.
            if len(texts) == 1:
                doc: Any = texts[0]
            elif structured is not None:
                doc = as_document(structured)
            else:
                doc = b""  # no single document: refused as an empty response
            r = contract.gate(doc, request_id, context)
            log.info("%s", r.audit_json)
            return r
        tool = self.tools.get(name)
        if tool is not None and tool.output is not None and not is_error:
            if structured is None:
                return Refusal(
                    "INVALID_RESPONSE", "the tool has an outputSchema but returned no structuredContent"
                )
            try:
                tool.output.validate(as_document(structured))
            except (ValidationError, ScanError) as e:
                return Refusal("INVALID_RESPONSE", f"{type(e).__name__}: {e}")
        if self.screen_results:
            docs = [as_document(structured)] if structured is not None else []
            docs += [json.dumps(t, ensure_ascii=False) for t in texts]
            found = [f for d in docs for f in screen(d, limits=self.limits)]
            if found:
                what = ", ".join(f"{f.pattern} at {f.pointer or '/'}" for f in found)
                if self.screen_results == "reject":
                    return Refusal("INSTRUCTION_LIKE_TEXT", what)
                log.warning("tool %r: instruction-like text in its result: %s", name, what)
        return None
