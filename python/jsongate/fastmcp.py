"""A FastMCP middleware: the server's own tool list screened and pinned, every call's
arguments validated against the tool's ``inputSchema`` before the tool runs, every result
validated against its ``outputSchema`` (or gated through a :class:`~jsongate.Contract`)
before it leaves the server.

Example::

    from fastmcp import FastMCP
    from jsongate.fastmcp import JsongateMiddleware

    mcp = FastMCP("reviews")
    mcp.add_middleware(JsongateMiddleware(contracts={"review_status": Contract("review.json")}))

A refused call or result becomes a tool error with a fixed text naming the reason (schema
keyword locations, never argument or result content); details go to the
``jsongate.guard`` logger.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult
from mcp_types import TextContent

from ._jsongate import Contract, GateResult
from ._tools import Refusal, ToolRules, log

__all__ = ["JsongateMiddleware"]


def _definition(tool: Tool) -> dict:
    return tool.to_mcp_tool().model_dump(by_alias=True, mode="json", exclude_none=True)


class JsongateMiddleware(Middleware):
    """Guards a FastMCP server's tools (see the module docs). Options as
    :class:`jsongate._tools.ToolRules`: ``contracts``, ``screen_tools`` (``"drop"``,
    ``"flag"``, ``None``), ``pin``, ``screen_results`` (``None``, ``"flag"``, ``"reject"``),
    ``limits``, ``format_assertion``."""

    def __init__(
        self,
        *,
        contracts: Optional[Mapping[str, Contract]] = None,
        screen_tools: Optional[str] = "drop",
        pin: bool = True,
        screen_results: Optional[str] = None,
        limits: Optional[dict] = None,
        format_assertion: bool = False,
    ) -> None:
        self.rules = ToolRules(
            contracts=dict(contracts or {}),
            screen_tools=screen_tools,
            pin=pin,
            screen_results=screen_results,
            limits=limits,
            format_assertion=format_assertion,
        )

    def _offer(self, tool: Tool) -> Optional[Tool]:
        if self.rules.admit(_definition(tool)) is not None:
            return None
        envelope = self.rules.output_schema_of(tool.name)
        if envelope is not None:
            return tool.model_copy(update={"output_schema": envelope})
        return tool

    async def on_list_tools(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        return [t for t in (self._offer(tool) for tool in tools) if t is not None]

    async def on_call_tool(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, ToolResult],
    ) -> ToolResult:
        params = context.message
        name = params.name
        if not self.rules.known(name) and name not in self.rules.refused_tools:
            server = context.fastmcp_context.fastmcp if context.fastmcp_context else None
            tool = await server.get_tool(name) if server is not None else None
            if tool is not None:
                self._offer(tool)
        refusal = self.rules.check_call(name, params.arguments)
        if refusal is not None:
            log.warning("tool %r: call refused: %s", name, refusal.detail)
            raise ToolError(refusal.text)
        result = await call_next(context)
        if not isinstance(result, ToolResult):
            return result  # a task acknowledgement or an input request: nothing to check
        texts = [b.text for b in result.content if isinstance(b, TextContent)]
        request_id = str(getattr(context.fastmcp_context, "request_id", None) or "-")
        strings = {k: v for k, v in (params.arguments or {}).items() if isinstance(v, str)}
        verdict = self.rules.check_result(
            name, request_id, result.structured_content, texts, result.is_error, strings
        )
        if isinstance(verdict, GateResult):
            return ToolResult(
                content=[TextContent(type="text", text=verdict.output)],
                structured_content=verdict.envelope,
                is_error=not verdict.accepted,
            )
        if isinstance(verdict, Refusal):
            log.warning("tool %r: result refused: %s", name, verdict.detail)
            return ToolResult(content=[TextContent(type="text", text=verdict.text)], is_error=True)
        return result
