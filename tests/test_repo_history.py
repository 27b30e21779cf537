"""harness.repo: any history git's object format allows is built (a path is a file, then a directory, and
the reverse), the builder and the reducer's model read a spec the same way, and a work tree is written
only when the case has one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from harness.cases.load import load_scenario
from harness.core.repospec import model_of
from harness.repo.build import materialize_repo, needs_worktree
from harness.repo.gitenv import isolated_env


def scenario(directory: Path, repo: dict, kind: str = "compile"):  # type: ignore[no-untyped-def]
    path = directory / "cases" / kind / "h.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"id": "h", "description": "d", "repo": repo}
    if kind == "lifecycle":
        doc["steps"] = [{"turn": "hi"}]
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return load_scenario(path)


def tree_at(repo: Path, rev: str) -> list[str]:
    env = isolated_env(repo.parent / "home")
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev], cwd=repo, env=env, capture_output=True, check=True, text=True
    )
    return listed.stdout.split()


FILE_THEN_DIR = {"commits": [{"files": {"a": "file\n"}}, {"delete": ["a"], "files": {"a/b.md": "dir\n"}}]}
DIR_THEN_FILE = {"commits": [{"files": {"a/b.md": "dir\n"}}, {"delete": ["a/b.md"], "files": {"a": "file\n"}}]}


@pytest.mark.parametrize(
    ("repo", "first", "last"), [(FILE_THEN_DIR, ["a"], ["a/b.md"]), (DIR_THEN_FILE, ["a/b.md"], ["a"])]
)
@pytest.mark.parametrize("kind", ["compile", "lifecycle"])  # a lifecycle case writes its work tree too
def test_a_path_can_be_a_file_then_a_directory_and_the_reverse(
    tmp_path: Path, repo: dict, first: list[str], last: list[str], kind: str
) -> None:
    built = materialize_repo(scenario(tmp_path, repo, kind), tmp_path / "cache")
    memory = built.root / "memory"
    assert tree_at(memory, "HEAD~1") == first and tree_at(memory, "HEAD") == last
    if kind == "lifecycle":
        assert (memory / last[0]).is_file() and not (memory / first[0]).is_file()


def test_a_plain_compile_case_gets_git_objects_and_no_work_tree(tmp_path: Path) -> None:
    long_name = "system/" + "n" * 300 + ".md"  # longer than a file name may be on disk
    built = materialize_repo(scenario(tmp_path, {"commits": [{"files": {long_name: "x\n"}}]}), tmp_path / "cache")
    memory = built.root / "memory"
    assert tree_at(memory, "HEAD") == [long_name]
    assert sorted(p.name for p in memory.iterdir()) == [".git"]


def test_a_case_with_work_tree_noise_gets_its_work_tree(tmp_path: Path) -> None:
    repo = {"commits": [{"files": {"a.md": "x\n"}}], "worktree": {"files": {"b.md": "untracked\n"}}}
    built = materialize_repo(scenario(tmp_path, repo), tmp_path / "cache")
    assert (built.root / "memory" / "a.md").read_text() == "x\n"
    assert (built.root / "memory" / "b.md").read_text() == "untracked\n"


@pytest.mark.parametrize(("kind", "needs"), [("git", False), ("no-git", True), ("unborn", True), ("missing", False)])
def test_which_cases_need_a_work_tree(tmp_path: Path, kind: str, needs: bool) -> None:
    repo = {"kind": kind} if kind == "missing" else {"kind": kind, "commits": [{"files": {"a.md": "x\n"}}]}
    assert needs_worktree(model_of(scenario(tmp_path, repo)), checkout=False) is needs


def test_no_git_applies_renames_and_deletions_as_the_reducer_model_does(tmp_path: Path) -> None:
    repo = {
        "kind": "no-git",
        "commits": [{"files": {"a.md": "a\n", "b.md": "b\n"}}, {"rename": {"a.md": "c.md"}, "delete": ["b.md"]}],
    }
    case = scenario(tmp_path, repo)
    built = materialize_repo(case, tmp_path / "cache")
    on_disk = sorted(p.name for p in (built.root / "memory").iterdir())
    assert on_disk == sorted(name.decode() for name in model_of(case).head) == ["c.md"]


def test_a_lifecycle_case_gets_its_checkout_even_after_a_compile_case_built_the_same_spec(tmp_path: Path) -> None:
    repo = {"commits": [{"files": {"system/a.md": "x\n"}}]}
    compiled = materialize_repo(scenario(tmp_path / "one", repo), tmp_path / "cache")
    probed = materialize_repo(scenario(tmp_path / "two", repo, "lifecycle"), tmp_path / "cache")
    assert not (compiled.root / "memory" / "system").exists()
    assert (probed.root / "memory" / "system" / "a.md").read_text() == "x\n"


def test_a_build_error_names_the_repository_not_its_random_staging_directory(tmp_path: Path) -> None:
    """A work tree file whose name is too long for the disk: the error reads the same on every run."""
    repo = {"kind": "no-git", "commits": [{"files": {"n" * 300 + ".md": "x\n"}}]}
    messages = []
    for attempt in range(2):
        with pytest.raises(OSError) as info:
            materialize_repo(scenario(tmp_path / str(attempt), repo), tmp_path / "cache")
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "<repository>/memory/nnn" in messages[0] and ".build-" not in messages[0]


def test_the_harness_reads_objects_as_exact_bytes_and_a_missing_one_as_none(tmp_path: Path) -> None:
    from harness.repo.catfile import CatFileError, read_objects

    env = isolated_env(tmp_path / "home")
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    blobs = [b"a\nb\x00\xff\n\n", b"", b"no newline"]
    oids = [
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=repo, env=env, input=blob, capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
        for blob in blobs
    ]
    missing = "0" * len(oids[0])
    found = read_objects(repo, env, [oids[0], missing, oids[1], oids[2], oids[0]])
    assert [None if o is None else (o.oid, o.type, o.content) for o in found] == [
        (oids[0], "blob", blobs[0]),
        None,
        (oids[1], "blob", blobs[1]),
        (oids[2], "blob", blobs[2]),
        (oids[0], "blob", blobs[0]),
    ]
    with pytest.raises(CatFileError, match="cat-file"):
        read_objects(tmp_path / "home", {**env, "GIT_CEILING_DIRECTORIES": str(tmp_path)}, [oids[0]])
