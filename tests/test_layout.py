"""The shape of harness/: no import cycle between its modules, data at the bottom, library apart from the
CLI, status strings written once, small modules that each say what they own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "harness"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(HARNESS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(HARNESS.rglob("*.py"))}


def imports_of(path: Path) -> set[str]:
    """The harness modules a file imports, anywhere in it (inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; write harness.x"
            base = node.module or ""
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        found |= {name for name in names if name in MODULES}
    return found


GRAPH = {name: imports_of(path) - {name} for name, path in MODULES.items()}


def cycle() -> list[str] | None:
    """A cycle in the import graph (module names, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node], _ = 1, stack.append(node)
        for target in sorted(GRAPH[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[node], _ = 2, stack.pop()
        return None

    for node in sorted(GRAPH):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_of_harness_has_no_cycle() -> None:
    assert cycle() is None, " -> ".join(cycle() or [])


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


@pytest.mark.parametrize("name", sorted(MODULES))
def test_each_module_is_small_and_says_what_it_owns(name: str) -> None:
    path = MODULES[name]
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES, f"{path}: over {MAX_LINES} lines; split it"
    assert ast.get_docstring(ast.parse(text)), f"{path}: no module docstring"


STATUS_VALUES = ("known-divergence", "stale-divergence", "runtime-divergence")


def test_status_strings_are_written_once() -> None:
    """Status values appear as literals only in the enum that defines them."""
    pattern = re.compile("[\"'](" + "|".join(STATUS_VALUES) + ")[\"']")
    found = [str(p) for name, p in MODULES.items() if name != "harness.core.model" and pattern.search(p.read_text())]
    templates = [str(p) for p in (HARNESS / "report" / "templates").glob("*.j2") if pattern.search(p.read_text())]
    assert found + templates == []


PORT = "memfs_prompt"
# The runners of the Python port: the only modules of harness/ that may import the code under test.
PORT_RUNNERS = ("harness.runners.python_port", "harness.runners.python_cli")


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (inside functions too), by its full dotted name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found


def imports_the_port(path: Path) -> bool:
    return any(name == PORT or name.startswith(PORT + ".") for name in imported_modules(path))


def test_only_the_python_runners_import_the_code_under_test() -> None:
    """The harness works with profile names (letta_profiles) and records; resolving a memfs_prompt Profile is
    the Python runners' job alone, so any implementation can be tested without the harness loading the port."""
    found = sorted(name for name, path in MODULES.items() if name not in PORT_RUNNERS and imports_the_port(path))
    assert found == [], f"these import {PORT} (only {', '.join(PORT_RUNNERS)} may): {', '.join(found)}"


def test_the_port_import_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""x"""\n\n\ndef f():\n    from memfs_prompt.profiles import DEFAULT\n', encoding="utf-8")
    assert imports_the_port(module)
    module.write_text('"""x"""\nimport memfs_prompt_extra, letta_profiles\n', encoding="utf-8")
    assert not imports_the_port(module)
    module.write_text('"""x"""\nimport os, memfs_prompt\n', encoding="utf-8")
    assert imports_the_port(module)


def test_the_profile_table_imports_nothing_from_the_project() -> None:
    """letta_profiles is read by the port and the harness alike: standard library only, neither of them."""
    package = HARNESS.parent / "letta_profiles"
    imported = {name.split(".")[0] for path in package.rglob("*.py") for name in imported_modules(path)}
    assert imported <= {"__future__", "collections", "types"}, imported
