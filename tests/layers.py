"""The layers of harness/, lowest first (issue 39), and which layer each folder belongs to: the one table that
tests/test_layout.py checks imports against and benchmarks/layering.py measures with. The harness itself does
not read it."""

from __future__ import annotations

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
