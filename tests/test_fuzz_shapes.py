"""harness.tools.fuzz_shapes: `conformance fuzz` generates memfs-v2 trees and `client_skills` inputs."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from harness.model import RepoModel
from harness.repo.spec import valid_tree
from harness.tools.fuzz_shapes import client_skills_values, v2_trees
from harness.tools.fuzz_strategies import _tree_of, blobs, compile_inputs, name_components, repo_models


def examples(strategy: st.SearchStrategy[Any], count: int = 150) -> list[Any]:
    """`count` generated values, the same on every run (no shrinking: only what fuzz would draw)."""
    drawn: list[Any] = []

    @settings(max_examples=count, database=None, derandomize=True, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn


def _index_at(tree: dict[bytes, Any], depth: int, under: bytes = b"") -> bool:
    return any(p.endswith(b"/MEMORY.md") and p.count(b"/") == depth and p.startswith(under) for p in tree)


def test_v2_trees_have_every_memfs_v2_shape() -> None:
    v2 = examples(v2_trees(blobs(), name_components()).map(_tree_of), 80)
    assert all(b"MEMORY.md" in tree and valid_tree(tree) for tree in v2)
    assert any(_index_at(tree, 1) for tree in v2)  # a first-level child index
    assert any(_index_at(tree, 2) for tree in v2)  # nested
    assert any(_index_at(tree, 1, b"skills/") for tree in v2)  # under skills/
    assert any(any(b"/" not in p and p != b"MEMORY.md" for p in tree) for tree in v2)  # root files


def test_repositories_mix_both_formats_and_may_switch_across_commits() -> None:
    models: list[RepoModel] = examples(repo_models(), 40)
    assert all(valid_tree(commit.files) for model in models for commit in model.commits)
    assert any(len({b"MEMORY.md" in c.files for c in model.commits}) == 2 for model in models)  # v1 <-> v2


def _skills(values: list[Any]) -> list[dict[str, Any]]:
    return [s for v in values if isinstance(v, list) for s in v if isinstance(s, dict)]


def test_inputs_give_client_skills_of_every_kind() -> None:
    assert any("client_skills" in inputs for inputs in examples(compile_inputs))
    values = examples(client_skills_values)
    assert any(not isinstance(v, list) for v in values)  # not a list at all
    assert any(isinstance(v, list) and any(not isinstance(s, dict) for s in v) for v in values)
    skills = _skills(values)
    assert any("name" not in s for s in skills)
    assert any("\n" in str(s.get("description")) for s in skills)
    assert any("/nested/" in str(s.get("location")) for s in skills)
    names = [
        [s.get("name") for s in v if isinstance(s, dict) and isinstance(s.get("name"), str)]
        for v in values
        if isinstance(v, list)
    ]
    assert any(len(n) > len(set(n)) for n in names)  # a duplicate name
