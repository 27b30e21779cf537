"""How harness/'s folders import each other, against the layer order of issue 39.

Run from the checkout: `python -m benchmarks.layering` (`--json` for the figures as JSON). It reads every module
under harness/ with `ast` (imports inside functions and under `if TYPE_CHECKING:` count, as in
tests/test_layout.py) and prints:

- the folder graph: which node imports which, with the number of import statements;
- the cycles between nodes (strongly connected components of more than one node, and every pair of nodes that
  import each other, with one file:line each way);
- every upward import (a module importing one of a higher layer), with file:line;
- every import between cases/, repo/ and verdict/ (one layer, which issue 39 wants to import only core).

`--longest N` prints instead the N longest functions under harness/ (nested ones on their own; a function's
length runs from its `def` line to its last line, decorators not counted).

Nodes are the folders of harness/ (a module in a sub-folder belongs to its top folder: `runners/result_store/`
to `runners`; harness/__init__.py to `core`). Layers, lowest first, as issue 39 orders them: core <
cases/repo/verdict < acquire/runners < run < report < tools < cli. Folders of one layer may import each other
(that is sideways, not upward, though a pair that does so both ways is still a cycle). The layers and the folder
of each are read from tests/layers.py, the table tests/test_layout.py checks against: one mapping for both.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "harness"
if str(ROOT) not in sys.path:  # tests/ is no package installed with the harness: read it from the checkout
    sys.path.insert(0, str(ROOT))

from tests.layers import FOLDER_LAYER, LAYERS, folder_of, function_lengths  # noqa: E402


@dataclass(frozen=True)
class Import:
    source: str  # module importing, dotted
    target: str  # harness module imported, dotted
    file: str  # relative to the checkout
    line: int


def module_name(path: Path) -> str:
    parts = path.relative_to(HARNESS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def node_of(module: str) -> str:
    """`harness.runners.result_store.key` -> `runners`; `harness` -> `core`."""
    return folder_of(module)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(HARNESS.rglob("*.py"))}


def imports(known: dict[str, Path]) -> list[Import]:
    """Every import of a harness module by a harness module, anywhere in the file."""
    found = []
    for name, path in known.items():
        rel = str(path.relative_to(HARNESS.parent))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                # `from harness.runners import manifest` imports harness.acquire.manifest
                subs = [f"{node.module}.{alias.name}" for alias in node.names]
                targets = [s for s in subs if s in known] or [node.module]
            for target in targets:
                while target and target not in known:  # `import harness.x.y` of a name inside a module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.append(Import(name, target, rel, node.lineno))
    return found


def folder_graph(found: list[Import]) -> dict[str, dict[str, list[Import]]]:
    graph: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for imp in found:
        a, b = node_of(imp.source), node_of(imp.target)
        if a != b:
            graph[a][b].append(imp)
    return graph


def components(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(found)


def rank(node: str) -> int:
    if node not in FOLDER_LAYER:
        raise SystemExit(f"harness folder {node!r} has no layer; add it to FOLDER_LAYER in tests/layers.py")
    return LAYERS.index(FOLDER_LAYER[node])


def measure() -> dict[str, object]:
    known = modules()
    found = imports(known)
    graph = folder_graph(found)
    nodes = sorted({node_of(m) for m in known})
    edges = {a: set(targets) for a, targets in graph.items()}
    pairs = sorted((a, b) for a in edges for b in edges[a] if a < b and a in edges.get(b, set()))
    upward = sorted(
        (i for i in found if rank(node_of(i.source)) < rank(node_of(i.target))), key=lambda i: (i.file, i.line)
    )
    sideways = sorted(
        (
            i
            for i in found
            if FOLDER_LAYER.get(node_of(i.source)) == FOLDER_LAYER.get(node_of(i.target)) == "cases/repo/verdict"
            and node_of(i.source) != node_of(i.target)
        ),
        key=lambda i: (i.file, i.line),
    )
    return {
        "nodes": {n: FOLDER_LAYER.get(n) for n in nodes},
        "graph": {a: {b: len(graph[a][b]) for b in sorted(graph[a])} for a in sorted(graph)},
        "components": components(nodes, edges),
        "mutual_pairs": [
            {"pair": [a, b], "ab": _where(graph[a][b][0]), "ba": _where(graph[b][a][0])} for a, b in pairs
        ],
        "upward": [
            {
                "at": _where(i),
                "from": i.source,
                "to": i.target,
                "layers": [FOLDER_LAYER[node_of(i.source)], FOLDER_LAYER[node_of(i.target)]],
            }
            for i in upward
        ],
        "sideways": [_where(i) for i in sideways],
    }


def _where(imp: Import) -> str:
    return f"{imp.file}:{imp.line} {imp.source} -> {imp.target}"


def longest(count: int) -> list[tuple[int, str]]:
    """The `count` longest functions of harness/: (lines, `file:line qualified.name`), longest first."""
    found = [
        (length, f"{path.relative_to(HARNESS.parent)}:{line} {name}")
        for path in modules().values()
        for line, name, length in function_lengths(ast.parse(path.read_text(encoding="utf-8")))
    ]
    return sorted(found, key=lambda f: (-f[0], f[1]))[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.layering", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--longest", type=int, metavar="N", help="print the N longest functions instead")
    args = parser.parse_args(argv)
    if args.longest:
        for length, where in longest(args.longest):
            print(f"{length:4d}  {where}")
        return 0
    figures = measure()
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    nodes = figures["nodes"]
    assert isinstance(nodes, dict)
    print("layers (lowest first):", " < ".join(LAYERS))
    for layer in LAYERS:
        print(f"  {layer}: {', '.join(n for n, at in nodes.items() if at == layer)}")
    graph = figures["graph"]
    assert isinstance(graph, dict)
    print(f"\nfolder graph ({len(nodes)} nodes; node -> node (import statements)):")
    for a, targets in graph.items():
        print(f"  {a} -> " + ", ".join(f"{b} ({n})" for b, n in targets.items()))
    comps = figures["components"]
    pairs = figures["mutual_pairs"]
    assert isinstance(comps, list) and isinstance(pairs, list)
    print(f"\ncycles: {len(comps)} strongly connected components of more than one node")
    for comp in comps:
        print(f"  {' '.join(comp)}")
    print(f"pairs of nodes importing each other: {len(pairs)}")
    for pair in pairs:
        print(f"  {pair['pair'][0]} <-> {pair['pair'][1]}\n    {pair['ab']}\n    {pair['ba']}")
    upward = figures["upward"]
    assert isinstance(upward, list)
    print(f"\nupward imports: {len(upward)} (import statements from a lower layer to a higher one)")
    for up in upward:
        print(f"  {up['at']}  [{up['layers'][0]} -> {up['layers'][1]}]")
    sideways = figures["sideways"]
    assert isinstance(sideways, list)
    print(f"\nsideways imports between cases/, repo/ and verdict/: {len(sideways)} (issue 39: these import only core)")
    for where in sideways:
        print(f"  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
