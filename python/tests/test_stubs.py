"""The type stubs describe the compiled module as it is: every public name of
``jsongate._jsongate`` is declared in ``_jsongate.pyi`` and nothing else is, every class's
public methods and properties are declared, and everything public has a docstring."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import jsongate
from jsongate import _jsongate

STUB = Path(_jsongate.__file__).with_name("_jsongate.pyi")
TYPE_ALIASES = {"Document", "JsonValue", "Parsed", "Limits", "Clock", "CallerLike"}


def stub_tree():
    assert STUB.exists(), "the wheel ships the stub"
    return ast.parse(STUB.read_text())


def declared(tree):
    names, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
            members[node.name] = {
                n.target.id if isinstance(n, ast.AnnAssign) else n.name
                for n in node.body
                if isinstance(n, (ast.FunctionDef, ast.AnnAssign))
            }
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, (ast.AnnAssign, ast.Assign)):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            names.add(target.id)
    return names - TYPE_ALIASES, members


def test_every_public_name_is_declared_and_nothing_else():
    names, _ = declared(stub_tree())
    public = {n for n in dir(_jsongate) if not n.startswith("_")}
    assert names == public


def test_every_public_member_of_every_class_is_declared():
    _, members = declared(stub_tree())
    for cls_name, stubbed in members.items():
        cls = getattr(_jsongate, cls_name)
        if issubclass(cls, BaseException):
            continue  # attributes are set per instance
        real = {n for n, _ in inspect.getmembers(cls) if not n.startswith("_")}
        assert real <= stubbed | {"__init__"}, (cls_name, real - stubbed)


def test_everything_public_has_a_docstring():
    for name in dir(_jsongate):
        obj = getattr(_jsongate, name)
        if name.startswith("_") or not (inspect.isclass(obj) or callable(obj)):
            continue
        assert (obj.__doc__ or "").strip(), name
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for m, v in inspect.getmembers(obj):
                if not m.startswith("_"):
                    assert (getattr(v, "__doc__", None) or "").strip(), f"{name}.{m}"


def test_the_package_exports_the_compiled_names_and_the_guard():
    assert set(jsongate.__all__) >= {n for n in dir(_jsongate) if not n.startswith("_")}
    assert {"guard_tool_result", "GuardRejected"} <= set(jsongate.__all__)
    assert (Path(jsongate.__file__).parent / "py.typed").exists()
