"""jsongate: decide, in one streaming pass and with bounded memory, whether untrusted JSON may
reach an AI agent.

The engine is the Rust crate of the same name; this package is a thin binding to it plus
guards for the places Python agent stacks plug things in:

- :func:`check` -- strict JSON (duplicate member names rejected after unescaping) within limits;
- :func:`loads` -- Python objects from strict JSON, validated against a :class:`Schema` in the
  same pass;
- :class:`Schema` -- JSON Schema 2020-12 / 2019-09 / draft-07 / -06 / -04, validated while scanning
  (``validate``, ``is_valid``, ``iter_errors``), and :class:`Validator` for streamed bodies
  (``feed``/``finish``);
- :class:`Contract` -- a tool contract: the agent-facing envelope and the audit record;
- :class:`Policy` -- tool-call decisions (``allow``, ``deny``, ``ask``), optionally for a
  :class:`Caller` (who the call is made for: its scopes as grants, its subject as context);
- :class:`Provenance` -- the values untrusted output handed the agent, so that ``Policy.decide``
  asks (``untrusted_origin``) before one of them reaches a sensitive argument;
  :func:`provenance_values` the values one text carries;
- :func:`screen` -- instruction-like text in untrusted strings; :func:`screen_definition` the
  same in one tool-definition string, obfuscation included; :func:`redact_text` the ``redact``
  action on one string; :func:`learned_score` what the learned second stage makes of a string;
- :class:`ToolDefinition` -- an MCP tool definition's canonical form, pin (SHA-256), screening
  and classified changes;
- :func:`guard_tool_result` -- a decorator that gates what a tool function returns;
- ``jsongate.fastmcp``, ``jsongate.mcp``, ``jsongate.agents`` -- a FastMCP middleware, an MCP
  ``ClientSession`` wrapper and an OpenAI Agents SDK tool-output guardrail (each imports its
  framework only when used).

Documents are given as ``bytes``, ``bytearray``, ``memoryview`` or ``str``; ``bytes`` are
read in place with the interpreter lock released (from :data:`RELEASE_GIL_AT` bytes on).
"""

from __future__ import annotations

import importlib.metadata as _metadata

from ._guard import GuardRejected, guard_tool_result
from ._jsongate import (
    DEFAULT_LIMITS,
    ENGINE_VERSION,
    RELEASE_GIL_AT,
    Caller,
    ConfigError,
    Contract,
    Decision,
    Finding,
    GateResult,
    JsongateError,
    LimitExceeded,
    Policy,
    Provenance,
    ScanError,
    Schema,
    SchemaError,
    ToolDefinition,
    ValidationError,
    Validator,
    check,
    learned_score,
    loads,
    provenance_values,
    redact_text,
    screen,
    screen_definition,
)

__version__: str = _metadata.version("jsongate")
"""The package version (the binding crate's); ``ENGINE_VERSION`` is the core crate's."""

__all__ = [
    "DEFAULT_LIMITS",
    "ENGINE_VERSION",
    "RELEASE_GIL_AT",
    "Caller",
    "ConfigError",
    "Contract",
    "Decision",
    "Finding",
    "GateResult",
    "GuardRejected",
    "JsongateError",
    "LimitExceeded",
    "Policy",
    "Provenance",
    "ScanError",
    "Schema",
    "SchemaError",
    "ToolDefinition",
    "ValidationError",
    "Validator",
    "check",
    "guard_tool_result",
    "learned_score",
    "loads",
    "provenance_values",
    "redact_text",
    "screen",
    "screen_definition",
]
