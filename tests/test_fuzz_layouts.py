"""harness.tools.fuzz.layouts: the fuzzer draws every repository shape, and each one builds and saves as a case."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import strategies as st
from test_fuzz_shapes import examples

from harness.cases.load import load_text
from harness.cases.write import case_document, dump_yaml
from harness.core.repomodel import MODE_GITLINK, RepoModel
from harness.repo.build import build_repo, needs_worktree
from harness.repo.gitenv import isolated_env
from harness.repo.shape import HEADS, LAYOUTS
from harness.tools.fuzz.layouts import repo_shapes
from harness.tools.fuzz.strategies import repo_models


def shaped_models() -> st.SearchStrategy[RepoModel]:
    """What the fuzzer draws: repo_models gives a shape and gitlinks to repositories without work-tree noise."""
    return repo_models()


def test_shapes_cover_every_layout_head_format_and_some_config() -> None:
    shapes = examples(repo_shapes(), 150)
    assert {shape.layout for shape in shapes} == set(LAYOUTS)
    assert {shape.head for shape in shapes} == set(HEADS)
    assert {shape.object_format for shape in shapes} == {"sha1", "sha256"}
    assert {key for shape in shapes for key, _ in shape.config} >= {"core.quotePath", "color.ui", "core.bare"}


def test_gitlinks_point_at_own_commits_and_at_missing_ones() -> None:
    models = examples(shaped_models(), 150)  # gitlinks are drawn rarely: 60 draws held none under some seeds
    assert {model.shape.layout for model in models} >= {"work-tree", "bare"}
    targets = [blob.data for model in models for blob in model.head.values() if blob.mode == MODE_GITLINK]
    assert any(target.startswith(b"commit:") for target in targets)  # present in the repository
    assert any(len(target) in (40, 64) for target in targets)  # a commit id the repository lacks


def test_every_drawn_shape_builds_and_saves_as_a_case_that_loads(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    for index, model in enumerate(examples(shaped_models(), 12)):
        # as the fuzzer builds it: a work tree only for work-tree noise (a null gitlink cannot be checked out)
        built = build_repo(model, tmp_path / f"r{index}", env, worktree=needs_worktree(model, False))
        if model.commits:
            listed = subprocess.run(
                ["git", "ls-tree", "-r", "HEAD"], cwd=built.memory_dir, env=env, capture_output=True
            )
            assert listed.returncode == 0, listed.stderr
        text = dump_yaml(case_document(f"drawn-{index}", "a drawn shape", model, tags=["fuzz"]))
        loaded = load_text(text, tmp_path / "compile" / f"drawn-{index}.yaml", "compile")
        assert loaded.repo.get("layout", "work-tree") == model.shape.layout
