"""The shape of harness/: folders in layer order (tests/layers.py) with no import running upward, no import
cycle between modules or folders, data at the bottom, library apart from the CLI, status strings written once,
short functions, and modules that each say what they own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from layers import FOLDER_LAYER, LAYERS, folder_of, function_lengths, rank

HARNESS = Path(__file__).resolve().parents[1] / "harness"
#: The longest a function may be, from its `def` line to its last line (a nested function counts on its own too).
MAX_FUNCTION_LINES = 60


def module_name(path: Path) -> str:
    parts = path.relative_to(HARNESS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(HARNESS.rglob("*.py"))}


def import_sites(path: Path) -> list[tuple[int, str]]:
    """(line, harness module) for each harness module a file imports, anywhere in it (inside functions and under
    `if TYPE_CHECKING:` too)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; write harness.x"
            base = node.module or ""
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        found += [(node.lineno, name) for name in names if name in MODULES]
    return found


def imports_of(path: Path) -> set[str]:
    """The harness modules a file imports, anywhere in it (inside functions too)."""
    return {name for _, name in import_sites(path)}


GRAPH = {name: imports_of(path) - {name} for name, path in MODULES.items()}
FOLDER_GRAPH = {
    folder: {folder_of(t) for name, targets in GRAPH.items() if folder_of(name) == folder for t in targets} - {folder}
    for folder in {folder_of(name) for name in MODULES}
}


def cycle(graph: dict[str, set[str]] | None = None) -> list[str] | None:
    """A cycle in an import graph (GRAPH unless given; names, the first repeated at the end), or None."""
    graph = GRAPH if graph is None else graph
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node], _ = 1, stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[node], _ = 2, stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_of_harness_has_no_cycle() -> None:
    assert cycle() is None, " -> ".join(cycle() or [])


def test_the_folders_of_harness_import_each_other_without_a_cycle() -> None:
    assert cycle(FOLDER_GRAPH) is None, " -> ".join(cycle(FOLDER_GRAPH) or [])


def test_every_folder_of_harness_has_a_layer() -> None:
    folders = {folder_of(name) for name in MODULES}
    assert folders - set(FOLDER_LAYER) == set(), "add these folders to FOLDER_LAYER in tests/layers.py"
    assert set(FOLDER_LAYER.values()) == set(LAYERS)


def upward_imports(name: str, path: Path) -> list[str]:
    """A module's imports of a higher layer than its own, each as `file:line` with the fix."""
    shown = path.relative_to(HARNESS.parent) if path.is_relative_to(HARNESS.parent) else path
    return [
        f"{shown}:{line}: {name} ({LAYERS[rank(name)]}) imports {target} "
        f"({LAYERS[rank(target)]}); move what it needs down to {LAYERS[rank(name)]} or lower, or pass it in"
        for line, target in import_sites(path)
        if rank(target) > rank(name)
    ]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_runs_upward_in_the_layer_order(name: str) -> None:
    found = upward_imports(name, MODULES[name])
    assert found == [], "\n".join(found)


def test_the_upward_check_sees_imports_inside_functions_and_for_type_checking(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""x"""\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from harness.run import session\n\n\n'
        "def f():\n    import harness.cli.main\n    from harness.core import plural\n",
        encoding="utf-8",
    )
    found = upward_imports("harness.cases.tags", module)
    assert [entry.split(": ")[0].rpartition(":")[2] for entry in found] == ["5", "5", "9"], found


@pytest.mark.parametrize("folder", ["cases", "repo", "verdict"])
def test_cases_repo_and_verdict_import_only_core_and_themselves(folder: str) -> None:
    """Issue 39: the three folders above core share only core's records and rules (a rule two of them need,
    such as the repository spec, lives in core), so each can be read, changed and tested alone."""
    found = [
        f"{MODULES[name].relative_to(HARNESS.parent)}:{line} imports {target}; move what it needs to harness/core/"
        for name in MODULES
        if folder_of(name) == folder and name != f"harness.{folder}"
        for line, target in import_sites(MODULES[name])
        if folder_of(target) not in ("core", folder)
    ]
    assert found == [], "\n".join(found)


def test_the_cycle_finder_finds_a_cycle() -> None:
    GRAPH["harness.core.model"].add("harness.run.session")
    try:
        found = cycle()
    finally:
        GRAPH["harness.core.model"].discard("harness.run.session")
    assert found is not None and found[0] == found[-1]


@pytest.mark.parametrize("module", ["harness.core.model", "harness.core.repomodel"])
def test_the_data_model_imports_nothing_from_the_project(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert imported <= {"__future__", "enum", "collections", "dataclasses", "json", "pathlib", "typing"}, imported


def test_reading_and_merging_reports_loads_no_runner() -> None:
    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for target in GRAPH[todo.pop()] - seen:
                seen.add(target)
                todo.append(target)
        return seen

    below = ("harness.runners", "harness.run.session")
    assert not {m for m in reachable("harness.report.merge") if m.startswith(below)}


def test_no_library_module_imports_the_cli() -> None:
    library = [name for name in GRAPH if not name.startswith("harness.cli")]
    assert [name for name in library if any(t.startswith("harness.cli") for t in GRAPH[name])] == []


def long_functions(tree: ast.AST, limit: int = MAX_FUNCTION_LINES) -> list[tuple[int, str, int]]:
    """(line, qualified name, length) of each function longer than `limit` lines, nested ones on their own."""
    return [found for found in function_lengths(tree) if found[2] > limit]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_each_function_is_short_and_each_module_says_what_it_owns(name: str) -> None:
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"{path}: no module docstring"
    long = [f"{path}:{line} {qualified} is {length} lines" for line, qualified, length in long_functions(tree)]
    assert long == [], f"over {MAX_FUNCTION_LINES} lines from def to its end; split: " + "; ".join(long)


def test_the_function_length_counts_nested_functions_on_their_own() -> None:
    lines = ["def outer():", *["    x = 1"] * 4, "    def inner():", *["        y = 2"] * 5, "", "class C:"]
    lines += ["    def m(self):", *["        z = 3"] * 5]
    tree = ast.parse("\n".join(lines) + "\n")
    assert long_functions(tree, limit=6) == [(1, "outer", 11)]
    assert long_functions(tree, limit=5) == [(1, "outer", 11), (6, "outer.inner", 6), (14, "C.m", 6)]
