"""The repositories the benchmarks compile: generated memfs-v1 trees and spec-v2 trees with deferred files.

They are built by the harness's own repository builder (harness.repo), from a seeded spec, and
cached by digest like every scenario's repository, so a second bench run skips building them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cases.load import DEFAULT_INPUTS
from harness.core.model import Scenario
from harness.repo.build import MaterializedRepo, materialize_repo

V1_SIZES = (10, 100, 1_000, 10_000)
V2_DEFERRED_SIZES = (100, 1_000, 10_000)
V2_CHILD_INDEXES = 20


@dataclass(frozen=True)
class Workload:
    name: str
    format: str  # v1 / v2
    files: int  # memory files in the tree
    scenario: Scenario


def _scenario(name: str, repo: dict[str, Any]) -> Scenario:
    return Scenario(
        name,
        f"benchmark repository {name}",
        Path("benchmarks") / "compile" / f"{name}.yaml",
        ("bench",),
        dict(DEFAULT_INPUTS),
        repo,
    )


def v1_workload(files: int) -> Workload:
    """`files` seeded Markdown files over system/, the root, notes/ and skills/, two levels deep."""
    repo = {"generate": {"seed": 9000 + files, "files": files, "depth": 2}}
    return Workload(f"v1-{files}", "v1", files, _scenario(f"bench-v1-{files}", repo))


def v2_workload(deferred: int) -> Workload:
    """A memfs-v2 tree: root MEMORY.md, three root files, 20 child indexes, `deferred` files listed by path only."""
    dirs = [f"area{i:02d}" for i in range(V2_CHILD_INDEXES)]
    files: dict[str, str] = {
        "MEMORY.md": "---\ndescription: root index\n---\nThe root index of this memory.\n",
        "persona.md": "---\ndescription: who I am\n---\nA careful agent.\n",
        "human.md": "---\ndescription: the user\n---\nLikes short answers.\n",
        "project.md": "---\ndescription: the project\n---\nA benchmark.\n",
    }
    for name in dirs:
        files[f"{name}/MEMORY.md"] = f"---\ndescription: index of {name}\n---\nWhat {name} holds.\n"
    repo = {
        "commits": [{"message": "v2 tree", "files": files}],
        "generate": {"seed": 7000 + deferred, "files": deferred, "depth": 2, "roots": dirs},
    }
    total = deferred + len(files)
    return Workload(f"v2-{deferred}", "v2", total, _scenario(f"bench-v2-{deferred}", repo))


def materialize(workload: Workload, cache: Path) -> MaterializedRepo:
    return materialize_repo(workload.scenario, cache)
