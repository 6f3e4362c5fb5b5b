"""The ``@guard_tool_result`` decorator: a tool function's return value goes through a
:class:`~jsongate.Contract` before anything else sees it."""

from __future__ import annotations

import functools
import inspect
import json
import logging
import os
import uuid
from typing import Any, Callable, Mapping, Optional, Union

from ._jsongate import Caller, Contract, GateResult, JsongateError

audit_log = logging.getLogger("jsongate.audit")

ContextFn = Callable[..., Mapping[str, str]]

CallerLike = Union[Caller, Mapping[str, Any]]
"""A :class:`Caller`, or a mapping with ``subject`` and optionally ``client_id`` and
``scopes``."""

CallerSource = Union[CallerLike, Callable[[], Optional[CallerLike]], None]
"""What the guards take as ``caller=``: a fixed caller, or a zero-argument callable returning
the current one (per-request identity, e.g. read from a ``contextvars.ContextVar``; ``None``
means the call is made for no caller), or ``None``."""


def fixed_caller(caller: CallerSource) -> CallerSource:
    """``caller`` as a guard keeps it: a mapping is checked and made a :class:`Caller` once,
    when the guard is built (``ConfigError``, kind ``"caller"``, if it is not usable); a
    callable is kept, and what it returns is checked at each decision."""
    if caller is None or isinstance(caller, Caller) or callable(caller):
        return caller
    return Caller.from_mapping(caller)


def current_caller(caller: CallerSource) -> Optional[CallerLike]:
    """The caller of one decision: ``caller`` itself, or what it returns when it is a
    callable."""
    if caller is None or isinstance(caller, (Caller, Mapping)):
        return caller
    return caller()


class GuardRejected(JsongateError):
    """A guard refused a tool result or call. ``result`` is the :class:`GateResult` (or the
    :class:`Decision`) that refused it; ``envelope`` is what the agent may be told."""

    def __init__(self, message: str, result: Any = None, envelope: Any = None) -> None:
        super().__init__(message)
        self.kind = "rejected"
        self.offset = None
        self.pointer = None
        self.result = result
        self.envelope = envelope


def as_document(value: Any) -> Union[str, bytes, bytearray, memoryview]:
    """A tool's return value as JSON text: text is kept as it is (so the engine sees the
    upstream's own bytes, duplicate names included); other values are serialised."""
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return value
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _default_context(sig: Optional[inspect.Signature], args: tuple, kwargs: dict) -> dict:
    """The call's string arguments by name: what the caller asked for is what the
    contract's ``equals`` checks compare the response against."""
    if sig is None:
        return {k: v for k, v in kwargs.items() if isinstance(v, str)}
    try:
        bound = sig.bind_partial(*args, **kwargs)
    except TypeError:
        return {}
    return {k: v for k, v in bound.arguments.items() if isinstance(v, str)}


def guard_tool_result(
    contract: Union[Contract, str, "os.PathLike[str]"],
    *,
    context: Optional[ContextFn] = None,
    request_id: Optional[Callable[..., str]] = None,
    returns: str = "envelope",
    on_audit: Optional[Callable[[GateResult], None]] = None,
    catch: bool = True,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Gates what the decorated tool function returns through ``contract``.

    The function returns the upstream response: JSON text (``str``/``bytes``, read as it
    is) or a JSON-compatible value. The caller gets, instead, the contract's envelope:
    ``returns="envelope"`` (a ``dict``, the default), ``"output"`` (its JSON line),
    ``"result"`` (the :class:`GateResult`) or ``"raise"`` (the envelope ``dict`` on success,
    :class:`GuardRejected` on a rejection).

    ``context(*args, **kwargs)`` gives the request values the contract's checks need; by
    default the call's ``str`` arguments by name. ``request_id(*args, **kwargs)`` gives the
    request id (default: a fresh UUID). Each decision's audit record goes to ``on_audit``
    (default: the ``jsongate.audit`` logger at INFO). With ``catch`` (the default) an
    exception raised by the function becomes an ``UPSTREAM_UNAVAILABLE`` envelope (its text
    never reaches the agent; it is logged).

    Works on plain and ``async`` functions.
    """
    if returns not in ("envelope", "output", "result", "raise"):
        raise ValueError(f"returns must be 'envelope', 'output', 'result' or 'raise', not {returns!r}")
    gate = contract if isinstance(contract, Contract) else Contract(contract)

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        try:
            sig: Optional[inspect.Signature] = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None

        def request(args: tuple, kwargs: dict) -> tuple:
            rid = request_id(*args, **kwargs) if request_id else uuid.uuid4().hex
            ctx = dict(context(*args, **kwargs)) if context else _default_context(sig, args, kwargs)
            return rid, ctx

        def conclude(r: GateResult) -> Any:
            if on_audit is not None:
                on_audit(r)
            else:
                audit_log.info("%s", r.audit_json)
            if returns == "result":
                return r
            if returns == "output":
                return r.output
            if returns == "raise" and not r.accepted:
                raise GuardRejected(f"{gate.tool}: result rejected ({r.code})", r, r.envelope)
            return r.envelope

        def failed(rid: str, ctx: dict) -> GateResult:
            audit_log.exception("%s: the tool raised; answering UPSTREAM_UNAVAILABLE", gate.tool)
            return gate.failure("UPSTREAM_UNAVAILABLE", rid, ctx)

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                rid, ctx = request(args, kwargs)
                try:
                    value = await fn(*args, **kwargs)
                except Exception:
                    if not catch:
                        raise
                    return conclude(failed(rid, ctx))
                return conclude(gate.gate(as_document(value), rid, ctx))

            return guarded_async

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            rid, ctx = request(args, kwargs)
            try:
                value = fn(*args, **kwargs)
            except Exception:
                if not catch:
                    raise
                return conclude(failed(rid, ctx))
            return conclude(gate.gate(as_document(value), rid, ctx))

        return guarded

    return decorate
