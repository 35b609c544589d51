"""The stubs (agentlog/__init__.pyi) name exactly what the package has."""

from __future__ import annotations

import ast
from pathlib import Path

import agentlog

STUB = Path(agentlog.__file__).with_suffix(".pyi")


def stub_api():
    tree = ast.parse(STUB.read_text())
    functions, classes = set(), {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions.add(node.name)
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef)
            }
    return functions, classes


def test_every_stubbed_name_exists():
    functions, classes = stub_api()
    for f in functions:
        assert callable(getattr(agentlog, f)), f
    for c, members in classes.items():
        cls = getattr(agentlog, c)
        for m in members:
            assert hasattr(cls, m), f"{c}.{m}"


def test_every_public_name_is_stubbed():
    functions, classes = stub_api()
    stubbed = functions | set(classes) | {
        "AgentlogError", "AmbiguousError", "FormatError", "NotFoundError", "ReadError"
    }
    assert set(agentlog.__all__) <= stubbed
    _, classes = stub_api()
    for c, members in classes.items():
        cls = getattr(agentlog, c)
        public = {n for n in dir(cls) if not n.startswith("_")}
        assert public <= members, f"{c}: not in the stubs: {public - members}"
