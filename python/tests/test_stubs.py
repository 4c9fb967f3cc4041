"""The type stubs name what the module defines, and nothing else."""

import ast
import pathlib

import types

import interned_string_db as isdb

STUBS = pathlib.Path(__file__).parent.parent / "interned_string_db.pyi"


def stub_names(body):
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
    return names


def test_the_stubs_and_the_module_name_the_same_things():
    tree = ast.parse(STUBS.read_text())
    # Less the extension module itself, which maturin's package wraps.
    public = {
        n
        for n in dir(isdb)
        if not n.startswith("_") and not isinstance(getattr(isdb, n), types.ModuleType)
    }
    assert stub_names(tree.body) == public
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = {n for n in stub_names(node.body) if not n.startswith("_")}
            runtime = {n for n in dir(getattr(isdb, node.name)) if not n.startswith("_")}
            assert methods == runtime, node.name


def test_every_public_name_has_a_docstring():
    for name in dir(isdb):
        if not name.startswith("_") and name not in ("INVALID_ID", "MAX_ID", "interned_string_db"):
            assert getattr(isdb, name).__doc__, name
