"""The post-turn memory reminders (`memory_reminder`, cases/ops/reminder-*): the repositories the cases build (a
merge, rebase or cherry-pick stopped on its conflicts, made with git, the same bytes every build), the loader's
refusals of `in_progress` and `worktree.stage` paths (file, line, fix), what the port and a release answer where
the op does not exist, and a planted bug (untracked files left out of the dirty count) named as its rule by a run
against a real release."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.cases.load import load_scenario
from harness.core.model import ScenarioError
from harness.repo.build import materialize_repo
from harness.repo.gitenv import isolated_env
from memfs_prompt.protocol import Server

ROOT = Path(__file__).resolve().parents[1]
OPS = ROOT / "cases" / "ops"
BASE = {"message": "base", "files": {"a.md": "base\n"}}
DIVERGED = [
    BASE,
    {"message": "theirs", "parents": [1], "files": {"a.md": "theirs\n"}},
    {"message": "ours", "parents": [1], "files": {"a.md": "ours\n"}},
]


def built(case: str, cache: Path) -> Path:
    return materialize_repo(load_scenario(OPS / f"{case}.yaml"), cache).memory_dir


def status(memory_dir: Path, home: Path) -> str:
    env = isolated_env(home)
    return subprocess.run(
        ["git", "status", "--porcelain"], cwd=memory_dir, env=env, capture_output=True, text=True
    ).stdout


@pytest.mark.parametrize(
    ("case", "marker"),
    [
        ("reminder-merge-conflict", "MERGE_HEAD"),
        ("reminder-rebase-conflict", "rebase-merge"),
        ("reminder-rebase-apply-conflict", "rebase-apply"),
        ("reminder-cherry-pick-conflict", "CHERRY_PICK_HEAD"),
    ],
)
def test_an_in_progress_case_stops_its_operation_on_the_conflict(case: str, marker: str, tmp_path: Path) -> None:
    memory_dir = built(case, tmp_path / "cache")
    assert (memory_dir / ".git" / marker).exists()
    assert status(memory_dir, tmp_path / "home").startswith("UU system/human.md")


def test_an_in_progress_repository_is_the_same_on_every_build(tmp_path: Path) -> None:
    first = built("reminder-rebase-conflict", tmp_path / "one")
    second = built("reminder-rebase-conflict", tmp_path / "two")
    for name in ("system/human.md", ".git/rebase-merge/onto", ".git/rebase-merge/orig-head"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_staged_paths_are_staged_and_the_rest_is_left_as_written(tmp_path: Path) -> None:
    lines = status(built("reminder-dirty-mixed", tmp_path / "cache"), tmp_path / "home").splitlines()
    assert sorted(lines) == sorted(["?? drafts/", "?? scratch.md", "M  system/human.md", " D system/persona.md"])


def test_an_op_case_gets_a_checkout_even_without_work_tree_changes(tmp_path: Path) -> None:
    # a compile case of the same spec builds no work tree (compilers read HEAD); an op case's `git status` would
    # then see every committed file deleted
    assert status(built("reminder-clean", tmp_path / "cache"), tmp_path / "home") == ""


def write_case(directory: Path, repo: dict, folder: str = "ops") -> Path:  # type: ignore[type-arg]
    path = directory / folder / "c.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"id": "c", "description": "d", "repo": repo, "op": "memory_reminder", "args": {}}
    if folder != "ops":
        data = {"id": "c", "description": "d", "repo": repo}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("repo", "folder", "says"),
    [
        ({"commits": DIVERGED, "in_progress": {"kind": "merge", "commit": 3}}, "ops", "is HEAD itself"),
        ({"commits": DIVERGED, "in_progress": {"kind": "merge", "commit": 4}}, "ops", "only 3 commit(s) come"),
        ({"commits": DIVERGED, "in_progress": {"kind": "merge", "commit": 2, "backend": "apply"}}, "ops", "backend is"),
        (
            {"commits": DIVERGED, "in_progress": {"kind": "merge", "commit": 2}},
            "compile",
            "only op and lifecycle cases take it",
        ),
        (
            {"commits": DIVERGED, "layout": "bare", "in_progress": {"kind": "merge", "commit": 2}},
            "ops",
            "layout work-tree",
        ),
        ({"commits": [BASE], "worktree": {"files": {"b.md": "b\n"}, "stage": ["c.md"]}}, "ops", "stage only paths"),
    ],
)
def test_the_loader_refuses_what_cannot_be_built_at_its_line(
    tmp_path: Path, repo: dict, folder: str, says: str
) -> None:  # type: ignore[type-arg]
    with pytest.raises(ScenarioError) as info:
        load_scenario(write_case(tmp_path, repo, folder))
    assert info.value.line is not None and says in str(info.value)


def test_an_operation_that_does_not_stop_is_a_build_error_with_the_fix(tmp_path: Path) -> None:
    clean = [BASE, {"message": "theirs", "parents": [1], "files": {"b.md": "b\n"}}, {"message": "ours", "parents": [1]}]
    scenario = load_scenario(write_case(tmp_path, {"commits": clean, "in_progress": {"kind": "rebase", "commit": 2}}))
    with pytest.raises(RuntimeError, match=r"did not stop .*change the same lines"):
        materialize_repo(scenario, tmp_path / "cache")


def test_the_port_has_no_reminders_before_0_30_28(tmp_path: Path) -> None:
    answer = Server().handle({"id": 1, "op": "memory_reminder", "memoryDir": str(tmp_path), "profile": "0.25.9"})
    assert answer == {
        "id": 1,
        "ok": False,
        "unsupported": "profile letta-code@0.25.9 has no post-turn memory sync (letta-code 0.30.28+)",
    }


@pytest.mark.integration
def test_a_release_without_the_sync_answers_unsupported_with_what_it_lacks(release_bundle, reference_bun) -> None:  # type: ignore[no-untyped-def]
    bundle = release_bundle("0.25.9")
    driver = ROOT / "reference" / "driver.mjs"
    request = json.dumps({"id": 1, "op": "memory_reminder", "memoryDir": "/nonexistent"}) + "\n"
    done = subprocess.run(
        [str(reference_bun), str(driver), str(bundle)], input=request, capture_output=True, text=True, timeout=300
    )
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["unsupported"].startswith("letta-code 0.25.9 has no post-turn memory sync")


@pytest.mark.integration
def test_a_planted_dirty_count_bug_is_named_as_its_rule(tmp_path: Path, release_bundle) -> None:  # type: ignore[no-untyped-def]
    release_bundle("pypi:0.34.12")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv = [sys.executable, "-m", "harness.cli", "run", "cases/ops", "-k", "reminder", "--reference", "pypi:0.34.12"]
    argv += ["--impl", "cmd:python tests/planted_reminder_impl.py", "--no-timing", "--report", str(tmp_path)]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 1, done.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    failing = sorted(r["case"] for r in report["results"] if r["status"] == "fail")
    assert failing == ["reminder-dirty-mixed", "reminder-dirty-untracked"]
    first = report["attribution"][0]
    assert (first["rule"], first["explains"]) == ("reminder-dirty-count", 2)
