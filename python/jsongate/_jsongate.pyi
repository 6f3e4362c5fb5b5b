"""Type stubs of the compiled module ``jsongate._jsongate`` (the Rust engine's binding)."""

import os
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

Document = Union[bytes, bytearray, memoryview, str]
"""JSON text. ``bytes`` are read in place (with the interpreter lock released from
``RELEASE_GIL_AT`` bytes on), ``bytearray`` and whole ``memoryview``s in place with the lock
held, ``str`` and partial views after one copy."""

JsonValue = Union[Dict[str, Any], List[Any], bool]
Parsed = Union[Dict[str, Any], List[Any], Tuple[Any, ...], bool, int, float, None]
"""A document already parsed into Python objects; a ``str`` is always JSON text."""
Limits = Mapping[str, Union[int, bool, None]]
"""Limit names (``max_bytes``, ``max_depth``, ``max_name_bytes``, ``max_string_bytes``,
``max_number_bytes``, ``max_members``, ``max_items``) to integers; ``None`` lifts a limit;
``"i_json": True`` turns on the I-JSON profile (noncharacters rejected)."""

DEFAULT_LIMITS: Dict[str, int]
RELEASE_GIL_AT: int
ENGINE_VERSION: str
"""The core crate's version: what audit records name (their ``"jsongate"`` member)."""

class JsongateError(ValueError):
    """Base class of every error jsongate raises."""

    kind: str
    offset: Optional[int]
    pointer: Optional[str]

class ScanError(JsongateError):
    """The document was not read to its end (malformed JSON, duplicate name, bad UTF-8).

    ``kind`` is the engine's stable code: ``syntax``, ``duplicate_name``, ``invalid_utf8``,
    ``lone_surrogate``, ``noncharacter``, or a limit's (see ``LimitExceeded``)."""

    offset: int
    line: int
    column: int
    pointer: str
    limit: Optional[int]

class LimitExceeded(ScanError):
    """A limit was crossed (``too_large``, ``too_deep``, ``name_too_long``,
    ``string_too_long``, ``number_too_long``, ``too_many_members``, ``too_many_items``) or the
    evaluation budget ran out (``budget_exceeded``)."""

    limit: int

class ValidationError(JsongateError):
    """Well-formed JSON that does not satisfy the schema (``kind`` is ``"schema"``)."""

    keyword: str
    keyword_location: str
    absolute_keyword_location: str
    pointer: str
    offset: int
    line: int
    column: int
    message: str

class SchemaError(JsongateError):
    """A schema that does not compile (``kind``: ``"invalid"`` or ``"budget"``)."""

    location: str
    budget: Optional[str]
    limit: Optional[int]

class ConfigError(JsongateError):
    """A contract, policy, call, caller or request that cannot be used (``kind``:
    ``"contract"``, ``"policy"``, ``"call"``, ``"caller"``, ``"request"``, ``"limits"``,
    ``"options"``)."""

def check(data: Document, limits: Optional[Limits] = None) -> None:
    """Checks that ``data`` is one strict JSON document within ``limits``; raises
    ``ScanError``/``LimitExceeded`` at the first violation."""

def loads(
    data: Document,
    schema: Optional["Schema"] = None,
    *,
    limits: Optional[Limits] = None,
    decimal: bool = False,
) -> Any:
    """Parses ``data`` into Python objects (``dict``, ``list``, ``str``, ``int``, ``float``,
    ``bool``, ``None``) in one strict pass within ``limits``, validated against ``schema`` in
    the same pass when one is given. Raises as ``Schema.validate`` does. With
    ``decimal=True``, numbers with a fraction or exponent become ``decimal.Decimal``."""

class Schema:
    """A compiled JSON Schema (2020-12 by default); immutable, shareable between threads."""

    def __init__(
        self,
        schema: Union[Document, JsonValue],
        *,
        draft: str = "2020-12",
        format_assertion: bool = False,
        resources: Optional[Mapping[str, Union[Document, JsonValue]]] = None,
        limits: Optional[Limits] = None,
        eval_budget: Optional[int] = None,
    ) -> None: ...
    def validate(self, data: Union[Document, Parsed], limits: Optional[Limits] = None) -> None:
        """Raises ``ValidationError`` at the first violation, ``ScanError`` when the document
        is not read to its end. Parsed values are checked as their compact JSON text."""
    def is_valid(self, data: Union[Document, Parsed], limits: Optional[Limits] = None) -> bool: ...
    def iter_errors(
        self, data: Union[Document, Parsed], limits: Optional[Limits] = None, max_errors: int = 100
    ) -> Iterator[ValidationError]: ...
    def validator(self, limits: Optional[Limits] = None) -> "Validator": ...

class Validator:
    """Incremental validation of one document at a time: ``feed`` chunks, then ``finish``."""

    def __init__(self, schema: Schema, limits: Optional[Limits] = None) -> None: ...
    def feed(self, chunk: Document) -> bool:
        """``True`` while more input is needed, ``False`` once the verdict is decided."""
    def finish(self) -> None:
        """``None`` for a valid document; raises as ``Schema.validate`` otherwise."""
    def reset(self) -> None: ...
    @property
    def bytes_read(self) -> int: ...

class GateResult:
    """One gate decision."""

    @property
    def accepted(self) -> bool: ...
    @property
    def code(self) -> Optional[str]: ...
    @property
    def output(self) -> str:
        """The envelope's JSON line: the only thing the agent should see."""
    @property
    def envelope(self) -> Dict[str, Any]: ...
    @property
    def audit_json(self) -> str: ...
    @property
    def audit(self) -> Dict[str, Any]: ...
    @property
    def rendered(self) -> Optional[str]: ...

Clock = Union[None, float, int, str, Any]
"""``None`` (the system clock), Unix seconds, RFC 3339 text, or a ``datetime``."""

class Contract:
    """A compiled tool contract."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None: ...
    @staticmethod
    def from_json(
        text: Union[Document, JsonValue], base_dir: Optional[Union[str, "os.PathLike[str]"]] = None
    ) -> "Contract": ...
    @property
    def tool(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def envelope_schema(self) -> str: ...
    def gate(
        self,
        data: Document,
        request_id: str,
        context: Optional[Mapping[str, str]] = None,
        now: Clock = None,
    ) -> GateResult: ...
    def failure(
        self,
        code: str,
        request_id: str,
        context: Optional[Mapping[str, str]] = None,
        now: Clock = None,
    ) -> GateResult: ...
    def refuse(
        self,
        code: str,
        kind: str,
        request_id: str,
        context: Optional[Mapping[str, str]] = None,
        now: Clock = None,
    ) -> GateResult:
        """A failure decision made without reading a response nor checking the request."""

class Decision:
    """One tool-call decision."""

    @property
    def verdict(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def allowed(self) -> bool: ...
    @property
    def rule_failures(self) -> List[Tuple[str, str]]: ...
    @property
    def record(self) -> Dict[str, Any]: ...
    def to_json(self) -> str:
        """The decision record (the format ``jsongate decide`` prints; no caller)."""
    @property
    def subject(self) -> Optional[str]:
        """The subject of the caller the call was decided for, or ``None``."""
    @property
    def audit_json(self) -> str:
        """The audit line: the record, plus a last member ``"subject"`` when the call was
        decided for a caller."""

class Caller:
    """Who a tool call is made for, as the application authenticated them. Immutable,
    hashable; never holds a credential. ``subject`` and ``client_id``: 1 to 256 characters
    without control characters; each scope an RFC 6749 scope token (visible ASCII, no space,
    ``"`` or ``\\``); otherwise ``ConfigError`` (kind ``"caller"``)."""

    def __init__(
        self, subject: str, client_id: Optional[str] = None, scopes: Optional[Iterable[str]] = ()
    ) -> None: ...
    @staticmethod
    def from_mapping(value: Union["Caller", Mapping[str, Any]]) -> "Caller":
        """A caller from ``{"subject": ..., "client_id": ..., "scopes": [...]}`` (no other
        key); a ``Caller`` is returned as it is."""
    @property
    def subject(self) -> str: ...
    @property
    def client_id(self) -> Optional[str]: ...
    @property
    def scopes(self) -> Tuple[str, ...]: ...

CallerLike = Union[Caller, Mapping[str, Any]]

class Policy:
    """A compiled tool-call policy; keeps the rate state of the calls it decided."""

    def __init__(self, policy: Union[str, "os.PathLike[str]", Dict[str, Any]]) -> None: ...
    @staticmethod
    def from_json(text: Document) -> "Policy": ...
    def decide(
        self,
        call: Union[Document, Dict[str, Any]],
        grants: List[str] = ...,
        workspace: Optional[Union[str, "os.PathLike[str]"]] = None,
        now_ms: Optional[int] = None,
        *,
        caller: Optional[CallerLike] = None,
        provenance: Optional["Provenance"] = None,
    ) -> Decision:
        """Decides one call. With ``caller``: its scopes are held as grants besides
        ``grants``, the context values ``subject`` and ``client_id`` are the caller's (for
        ``equals_context``/``in_context_list`` rules), and rate limits count per subject.
        With ``provenance``: a sink argument carrying a value untrusted output handed the
        agent asks (``untrusted_origin``); an allowed call is noted as the model's own."""

class Provenance:
    """Values untrusted output handed one agent session (digests with their origin)."""

    def __init__(self) -> None: ...
    @staticmethod
    def from_records(text: Document) -> "Provenance": ...
    def record(self, tool: str, request_id: str, result: Union[Document, Dict[str, Any], List[Any]]) -> None: ...
    def note_call(self, arguments: Union[Document, Dict[str, Any]]) -> None: ...
    def origin_of(self, value: str) -> Optional[Dict[str, str]]: ...
    def to_records(self) -> str: ...
    @property
    def saturated(self) -> bool: ...
    def __len__(self) -> int: ...

def provenance_values(text: str) -> List[Tuple[str, str]]: ...

class Finding:
    """An instruction-like pattern in a string of a document."""

    pointer: str
    in_name: bool
    pattern: str
    class_: str
    offset: int
    length: int
    at: int
    evidence: List[str]
    def to_dict(self) -> Dict[str, Any]: ...

def learned_score(text: str) -> Dict[str, Any]: ...
def screen(data: Document, limits: Optional[Limits] = None) -> List[Finding]: ...
def screen_definition(text: str, pointer: str = "", in_name: bool = False) -> List[Finding]: ...
def redact_text(text: str, findings: List[Finding]) -> str: ...

class ToolDefinition:
    """An MCP tool definition in canonical form, with its SHA-256 (the pin)."""

    def __init__(self, definition: Union[Document, Dict[str, Any]]) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def sha256(self) -> str: ...
    @property
    def canonical(self) -> str: ...
    def screen(self) -> List[Tuple[str, str]]:
        """``(pointer, pattern)`` of instruction-like or hidden text, in document order."""
    def changes_since(self, pinned: "ToolDefinition") -> List[Dict[str, Any]]:
        """``kind``, ``dangerous``, ``pointer``, ``keyword`` of each change from ``pinned``."""
