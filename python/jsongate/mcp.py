"""An MCP ``ClientSession`` wrapper: the server's tool list screened and pinned, arguments
validated against ``inputSchema`` before a call is sent, results validated against
``outputSchema`` (or gated through a :class:`~jsongate.Contract`) before the agent sees them.

Example::

    from mcp import ClientSession
    from jsongate.mcp import GuardedSession

    async with ClientSession(read, write) as session:
        guarded = GuardedSession(session, contracts={"review_status": contract})
        await guarded.initialize()
        tools = await guarded.list_tools()          # screened and pinned
        result = await guarded.call_tool("review_status", {"change_id": "c-42"})

The wrapper works on anything with the ``ClientSession`` methods (``mcp.Client`` too); every
other attribute is the wrapped session's. What it checks are the values the SDK parsed: for
byte-level checks of what the server sent (duplicate names, limits while reading), run the
server behind ``jsongate mcp-proxy``; a text block's text, which is the upstream's own, is
gated as it is.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from mcp.types import CallToolResult, TextContent

from ._guard import CallerSource, GuardRejected, current_caller, fixed_caller
from ._jsongate import Contract, GateResult, Policy
from ._tools import Refusal, ToolRules, log

__all__ = ["GuardedSession"]


class GuardedSession:
    """Wraps an MCP ``ClientSession``. Options as :class:`jsongate._tools.ToolRules`
    (``contracts``, ``screen_tools``, ``pin``, ``screen_results``, ``limits``,
    ``format_assertion``, ``policy``, ``grants``, ``workspace``). ``on_refusal`` is
    ``"result"`` (the default: a refused call or result comes back as a ``CallToolResult``
    with ``isError`` and a fixed text, as a tool error would) or ``"raise"``
    (:class:`~jsongate.GuardRejected`).

    With a ``policy``, each call is decided before it is sent (after the ``inputSchema``
    check), for ``caller``: a :class:`~jsongate.Caller` (or a mapping, checked here), or a
    zero-argument callable returning the current one at each call (per-request identity,
    e.g. from a ``contextvars.ContextVar``). Its scopes are held as grants besides
    ``grants``, ``subject``/``client_id`` are the policy's context values, rate limits count
    per subject, and the audit line names the subject (see ``Policy.decide``). A refused call
    reads ``jsongate: the call was refused (<reason>)``."""

    def __init__(
        self,
        session: Any,
        *,
        contracts: Optional[Mapping[str, Contract]] = None,
        screen_tools: Optional[str] = "drop",
        pin: bool = True,
        screen_results: Optional[str] = None,
        limits: Optional[dict] = None,
        format_assertion: bool = False,
        policy: Optional[Policy] = None,
        grants: Iterable[str] = (),
        workspace: Optional[str] = None,
        caller: CallerSource = None,
        on_refusal: str = "result",
    ) -> None:
        if on_refusal not in ("result", "raise"):
            raise ValueError(f"on_refusal must be 'result' or 'raise', not {on_refusal!r}")
        if caller is not None and policy is None:
            raise ValueError("caller= is decision context for policy=: give a policy too")
        self.session = session
        self.on_refusal = on_refusal
        self.rules = ToolRules(
            contracts=dict(contracts or {}),
            screen_tools=screen_tools,
            pin=pin,
            screen_results=screen_results,
            limits=limits,
            format_assertion=format_assertion,
            policy=policy,
            grants=tuple(grants),
            workspace=workspace,
        )
        self.caller = fixed_caller(caller)
        self._calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
        """The server's listing, less the tools the rules refuse (see the module docs)."""
        result = await self.session.list_tools(*args, **kwargs)
        kept = []
        for tool in result.tools:
            definition = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
            if self.rules.admit(definition) is None:
                envelope = self.rules.output_schema_of(tool.name)
                kept.append(tool if envelope is None else tool.model_copy(update={"output_schema": envelope}))
        return result.model_copy(update={"tools": kept})

    async def call_tool(self, name: str, arguments: Optional[dict] = None, *args: Any, **kwargs: Any) -> Any:
        """Checks the call, sends it, checks the result."""
        if not self.rules.known(name) and name not in self.rules.refused_tools:
            await self.list_tools()
        refusal = self.rules.check_call(name, arguments, current_caller(self.caller))
        if refusal is not None:
            return self._refused(name, refusal)
        try:
            result = await self.session.call_tool(name, arguments, *args, **kwargs)
        except RuntimeError as e:
            # The SDK checks structured content against the listed outputSchema itself and
            # raises with the offending content in the message: refuse with a fixed text.
            if not _is_sdk_output_check(e):
                raise
            return self._refused(name, Refusal("INVALID_RESPONSE", "the SDK's outputSchema check failed"))
        if not isinstance(result, CallToolResult):
            return result  # an input request or a claimed extension result
        self._calls += 1
        request_id = f"{name}-{self._calls}"
        texts = [b.text for b in result.content if isinstance(b, TextContent)]
        strings = {k: v for k, v in (arguments or {}).items() if isinstance(v, str)}
        verdict = self.rules.check_result(
            name, request_id, result.structured_content, texts, bool(result.is_error), strings
        )
        if isinstance(verdict, GateResult):
            if not verdict.accepted and self.on_refusal == "raise":
                raise GuardRejected(f"{name}: result rejected ({verdict.code})", verdict, verdict.envelope)
            return CallToolResult(
                content=[TextContent(type="text", text=verdict.output)],
                structured_content=verdict.envelope,
                is_error=not verdict.accepted,
            )
        if isinstance(verdict, Refusal):
            return self._refused(name, verdict)
        return result

    def _refused(self, name: str, refusal: Refusal) -> CallToolResult:
        log.warning("tool %r: %s refused: %s", name, refusal.what, refusal.detail)
        if self.on_refusal == "raise":
            raise GuardRejected(f"{name}: {refusal.text}: {refusal.detail}", refusal)
        return CallToolResult(content=[TextContent(type="text", text=refusal.text)], is_error=True)


def _is_sdk_output_check(e: RuntimeError) -> bool:
    """Whether ``e`` is the MCP SDK's own rejection of a result against its outputSchema."""
    text = str(e)
    return text.startswith("Invalid structured content returned by tool") or (
        "has an output schema but did not return structured content" in text
    )
