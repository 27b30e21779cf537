"""harness.tools.fuzz.shapes: `conformance fuzz` generates memfs-v2 trees and `client_skills` inputs."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers  # Hypothesis's own draw of local constants
from hypothesis.internal.floats import float_to_int
from sortedcontainers import SortedSet

from harness.core.repomodel import RepoModel
from harness.core.repospec import valid_tree
from harness.tools.fuzz.shapes import client_skills_values, v2_trees
from harness.tools.fuzz.strategies import _tree_of, blobs, compile_inputs, name_components, repo_models


def examples(strategy: st.SearchStrategy[Any], count: int = 150) -> list[Any]:
    """`count` generated values, the same on every run (no shrinking: only what fuzz would draw).

    Hypothesis also draws constants it finds in whatever project and test modules are loaded (its "local
    constants", cached across draws), which would make the sample depend on the tests run before it; an empty
    pool and cache keep it fixed."""
    drawn: list[Any] = []

    @settings(
        max_examples=count,
        database=None,
        derandomize=True,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    with (
        mock.patch.object(providers, "_get_local_constants", return_value=_NO_LOCAL_CONSTANTS),
        mock.patch.object(providers, "CONSTANTS_CACHE", {}),  # what earlier draws cached from the pool
    ):
        collect()
    return drawn


_NO_LOCAL_CONSTANTS = providers.Constants(
    integers=SortedSet(), floats=SortedSet(key=float_to_int), bytes=SortedSet(), strings=SortedSet()
)


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
    values = examples(client_skills_values, 400)
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


# --- issue 17's families: revision syntax, built-ins, JavaScript inputs ------------------------------


def test_names_reach_git_show_revision_syntax_builtins_and_name_max() -> None:
    from harness.tools.fuzz.strategies import BUILTIN_NAMES, POLLUTING, builtin_paths

    models: list[RepoModel] = examples(repo_models(), 400)
    names = [name for model in models for commit in model.commits for name in commit.files]
    for syntax in (b"..", b"^", b"~", b"@{", b":", b"*", b"?", b"["):
        assert any(syntax in name for name in names), syntax
    assert any(name.startswith(b" ./") or b"/ ./" in name or name.startswith(b" ../") for name in names)
    assert any(max(map(len, name.split(b"/"))) > 250 for name in names)  # `HEAD:` + it is over NAME_MAX
    builtins = {part for name in names if name.startswith(b"system/") for part in name.split(b"/")[1:-1]}
    assert builtins & {n.encode() for n in BUILTIN_NAMES}  # built-in directories in ordinary repositories
    chains = [p.split(b"/")[1:-1] for p in examples(builtin_paths(), 60)]  # and in one repository in 50:
    assert any(set(chain) & {n.encode() for n in POLLUTING} for chain in chains)  # system/constructor/...
    noise = [name for model in models for name in model.worktree.files]
    assert noise and all(name.startswith(b"HEAD:") for name in noise)  # `HEAD:<path>` files in the work tree


def test_inputs_give_javascript_numbers_and_dates_the_port_models() -> None:
    from harness.tools.fuzz.campaign import is_refused
    from memfs_prompt.jsvalues import parse_js_date

    inputs = [i for i in examples(compile_inputs, 400) if not is_refused(i)]  # the refused are never compiled
    counts = [i["previous_message_count"] for i in inputs if "previous_message_count" in i]
    assert any(isinstance(c, float) for c in counts) and any(c < 0 for c in counts)
    assert any(isinstance(c, int) and c > 2**53 for c in counts)
    dates = [i["now"] for i in inputs if "now" in i]
    parsed = [parse_js_date(d) for d in dates]  # every one is a form the port models (no UnsupportedJsValue)
    assert any(not p.valid for p in parsed) and any(p.valid for p in parsed)  # Invalid Dates and good ones
    assert any(d.startswith(("+", "-")) for d in dates) and any("T" not in d and "t" not in d for d in dates)
