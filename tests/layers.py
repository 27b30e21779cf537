"""The layers of harness/, lowest first (issue 39), which layer each folder belongs to, and how long a function
is: what tests/test_layout.py checks and benchmarks/layering.py measures, written once for both. The harness
itself does not read this file."""

from __future__ import annotations

import ast

#: Layers, lowest first; a module may import only modules of its own layer or of a lower one.
LAYERS = ("core", "cases/repo/verdict", "acquire/runners", "run", "report", "tools", "cli")

#: Each folder of harness/ (its first path part below harness/) and its layer. harness/__init__.py is core.
FOLDER_LAYER = {
    "core": "core",
    "cases": "cases/repo/verdict",
    "repo": "cases/repo/verdict",
    "verdict": "cases/repo/verdict",
    "acquire": "acquire/runners",
    "runners": "acquire/runners",
    "run": "run",
    "report": "report",
    "tools": "tools",
    "cli": "cli",
}


def folder_of(module: str) -> str:
    """`harness.runners.result_store.key` -> `runners`; `harness` (the package itself) -> `core`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "core"


def rank(module: str) -> int:
    """The position of a harness module's layer in LAYERS (0 is core); KeyError for a folder with no layer."""
    return LAYERS.index(FOLDER_LAYER[folder_of(module)])


def function_lengths(tree: ast.AST) -> list[tuple[int, str, int]]:
    """(line, qualified name, length) of every function in a module, a nested one on its own (its lines count in
    the function around it too); a function's length runs from its `def` line to its last line, decorators not
    counted."""
    found: list[tuple[int, str, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    found.append((child.lineno, name, (child.end_lineno or child.lineno) - child.lineno + 1))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found
