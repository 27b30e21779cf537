"""harness.repo: the bytes a scenario names are the bytes in HEAD, read back with git itself.

Expected bytes follow from the scenario schema's own definitions (harness/schema.json: text is
UTF-8, `bom` prefixes EF BB BF, `newlines` rewrites LF as CRLF / CR / a CRLF-LF-CR rotation,
`base64` is decoded, `symlink` is a link to the given target, `path_base64` is the raw name).
"""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.cases.load import load_scenario
from harness.core.repospec import model_of
from harness.repo.build import build_repo, materialize_repo
from memfs_prompt.git_head import open_committed_head

BINARY_NO_NUL = bytes(range(1, 256))
BINARY_WITH_NUL = b"\x00\x01\x02\xff\x00"
NEWLINE_NAME = b"new\nline.md"
LATIN1_NAME = b"caf\xe9.md"  # not valid UTF-8

FILES = [
    {"path": "bom.md", "content": {"text": "---\ndescription: d\n---\nbody\n", "bom": True}},
    {"path": "cr.md", "content": {"text": "a\nb\n", "newlines": "cr"}},
    {"path": "crlf.md", "content": {"text": "a\nb\n", "newlines": "crlf"}},
    {"path": "mixed.md", "content": {"text": "1\n2\n3\n4\n5\n", "newlines": "mixed"}},
    {"path": "raw-cr.md", "content": "x\ry\r\n"},
    {"path": "binary.md", "content": {"base64": base64.b64encode(BINARY_NO_NUL).decode()}},
    {"path": "nul.md", "content": {"base64": base64.b64encode(BINARY_WITH_NUL).decode()}},
    {"path": "sp ace.md", "content": "space\n"},
    {"path": 'quo"te.md', "content": "quote\n"},
    {"path": "dir/é日本.md", "content": "unicode\n"},
    {"path_base64": base64.b64encode(NEWLINE_NAME).decode(), "content": "newline in name\n"},
    {"path_base64": base64.b64encode(LATIN1_NAME).decode(), "content": "latin-1 name\n"},
    {"path": "target.md", "content": "target\n"},
    {"path": "link.md", "content": {"symlink": "target.md"}},
    {"path": "run.sh", "content": {"text": "#!/bin/sh\n", "executable": True}},
]

EXPECTED_BLOBS: dict[bytes, tuple[bytes, bytes]] = {  # name -> (mode, bytes)
    b"bom.md": (b"100644", b"\xef\xbb\xbf---\ndescription: d\n---\nbody\n"),
    b"cr.md": (b"100644", b"a\rb\r"),
    b"crlf.md": (b"100644", b"a\r\nb\r\n"),
    b"mixed.md": (b"100644", b"1\r\n2\n3\r4\r\n5\n"),
    b"raw-cr.md": (b"100644", b"x\ry\r\n"),
    b"binary.md": (b"100644", BINARY_NO_NUL),
    b"nul.md": (b"100644", BINARY_WITH_NUL),
    b"sp ace.md": (b"100644", b"space\n"),
    b'quo"te.md': (b"100644", b"quote\n"),
    "dir/é日本.md".encode(): (b"100644", b"unicode\n"),
    NEWLINE_NAME: (b"100644", b"newline in name\n"),
    LATIN1_NAME: (b"100644", b"latin-1 name\n"),
    b"target.md": (b"100644", b"target\n"),
    b"link.md": (b"120000", b"target.md"),
    b"run.sh": (b"100755", b"#!/bin/sh\n"),
}


def scenario_file(directory: Path, repo: dict, case_id: str = "bytes") -> Path:
    path = directory / "compile" / f"{case_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump({"id": case_id, "description": "d", "repo": repo}, allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return path


def git(repo: Path, env: dict[str, str], *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, env=env, input=input, capture_output=True, check=True).stdout


def head_tree(repo: Path, env: dict[str, str]) -> dict[bytes, tuple[bytes, str]]:
    """name -> (mode, blob oid), from `git ls-tree -r -z HEAD`."""
    out = {}
    for record in git(repo, env, "ls-tree", "-r", "-z", "HEAD").split(b"\0")[:-1]:
        meta, name = record.split(b"\t", 1)
        mode, _, oid = meta.split(b" ")
        out[name] = (mode, oid.decode())
    return out


def cat_blob(repo: Path, env: dict[str, str], oid: str) -> bytes:
    return git(repo, env, "cat-file", "blob", oid)


@pytest.fixture
def bytes_repo(tmp_path: Path, git_env: dict[str, str]):
    scenario = load_scenario(scenario_file(tmp_path / "cases", {"commits": [{"files": FILES}]}))
    built = build_repo(model_of(scenario), tmp_path / "build", git_env)
    return built


def test_every_blob_in_head_has_the_bytes_and_mode_the_scenario_names(bytes_repo, git_env) -> None:
    tree = head_tree(bytes_repo.memory_dir, git_env)
    assert set(tree) == set(EXPECTED_BLOBS)
    for name, (mode, data) in EXPECTED_BLOBS.items():
        assert tree[name][0] == mode, name
        assert cat_blob(bytes_repo.memory_dir, git_env, tree[name][1]) == data, name


def test_head_is_the_returned_commit(bytes_repo, git_env) -> None:
    assert git(bytes_repo.memory_dir, git_env, "rev-parse", "HEAD").decode().strip() == bytes_repo.head


def test_the_compiler_reads_the_same_bytes_from_head(bytes_repo, git_env) -> None:
    head = open_committed_head(bytes_repo.memory_dir, git_env)
    try:
        assert head.revision == bytes_repo.head
        assert {e.path for e in head.entries} == set(EXPECTED_BLOBS)
        names = [n.decode() for n in EXPECTED_BLOBS if n not in (NEWLINE_NAME, LATIN1_NAME)]
        contents = head.read_paths(names)
        for name, data in zip(names, contents, strict=True):
            assert data == EXPECTED_BLOBS[name.encode()][1], name
    finally:
        head.close()


def test_the_work_tree_matches_head_when_there_is_no_noise(bytes_repo, git_env) -> None:
    # run.sh's mode is checked on its own below; here only content, names and links.
    status = git(bytes_repo.memory_dir, git_env, "-c", "core.fileMode=false", "status", "--porcelain", "-z")
    assert status == b""
    link = bytes_repo.memory_dir / "link.md"
    assert link.is_symlink() and os.readlink(link) == "target.md"
    assert (bytes_repo.memory_dir / "crlf.md").read_bytes() == b"a\r\nb\r\n"
    assert (bytes_repo.memory_dir / os.fsdecode(LATIN1_NAME)).read_bytes() == b"latin-1 name\n"


def test_an_executable_file_is_executable_in_the_work_tree_too(bytes_repo, git_env) -> None:
    assert os.access(bytes_repo.memory_dir / "run.sh", os.X_OK)
    assert git(bytes_repo.memory_dir, git_env, "status", "--porcelain", "--", "run.sh") == b""


def test_two_builds_give_the_same_head(tmp_path: Path, git_env) -> None:
    scenario = load_scenario(scenario_file(tmp_path / "cases", {"commits": [{"files": FILES}]}))
    first = build_repo(model_of(scenario), tmp_path / "one", git_env)
    other_env = {**git_env, "HOME": str(tmp_path / "other-home"), "TZ": "Asia/Tokyo"}
    (tmp_path / "other-home").mkdir()
    second = build_repo(model_of(scenario), tmp_path / "two", other_env)
    assert first.head is not None and first.head == second.head


def test_later_commits_delete_and_rename(tmp_path: Path, git_env) -> None:
    repo = {
        "commits": [
            {"message": "one", "files": {"a.md": "a\n", "b.md": "b\n", "c.md": "c\n"}},
            {"message": "two", "delete": ["a.md"], "rename": {"b.md": "sub/b2.md"}, "files": {"c.md": "c2\n"}},
        ]
    }
    built = build_repo(model_of(load_scenario(scenario_file(tmp_path / "cases", repo))), tmp_path / "b", git_env)
    tree = head_tree(built.memory_dir, git_env)
    assert set(tree) == {b"sub/b2.md", b"c.md"}
    assert cat_blob(built.memory_dir, git_env, tree[b"sub/b2.md"][1]) == b"b\n"
    assert cat_blob(built.memory_dir, git_env, tree[b"c.md"][1]) == b"c2\n"
    log = git(built.memory_dir, git_env, "log", "--format=%s|%at").decode().split("\n")[:-1]
    assert log == ["two|1767225660", "one|1767225600"]  # 2026-01-01T00:00:00Z + n minutes (harness/repo.py)


def test_worktree_noise_is_in_the_work_tree_but_not_in_head(tmp_path: Path, git_env) -> None:
    repo = {
        "commits": [{"files": {"system/human.md": "committed\n", "gone.md": "committed\n"}}],
        "worktree": {
            "files": {"system/human.md": "uncommitted\n", "untracked.md": "untracked\n"},
            "delete": ["gone.md"],
        },
    }
    built = build_repo(model_of(load_scenario(scenario_file(tmp_path / "cases", repo))), tmp_path / "b", git_env)
    work = built.memory_dir
    assert (work / "system/human.md").read_text() == "uncommitted\n"
    assert (work / "untracked.md").exists() and not (work / "gone.md").exists()
    tree = head_tree(work, git_env)
    assert set(tree) == {b"system/human.md", b"gone.md"}
    assert cat_blob(work, git_env, tree[b"system/human.md"][1]) == b"committed\n"
    status = git(work, git_env, "status", "--porcelain").decode().splitlines()
    assert sorted(status) == [" D gone.md", " M system/human.md", "?? untracked.md"]


def test_staged_noise_is_in_the_index_but_not_in_head(tmp_path: Path, git_env) -> None:
    repo = {
        "commits": [{"files": {"a.md": "committed\n"}}],
        "worktree": {"files": {"a.md": "staged\n", "new.md": "staged new\n"}, "stage": True},
    }
    built = build_repo(model_of(load_scenario(scenario_file(tmp_path / "cases", repo))), tmp_path / "b", git_env)
    work = built.memory_dir
    assert git(work, git_env, "show", ":a.md") == b"staged\n"
    assert git(work, git_env, "show", "HEAD:a.md") == b"committed\n"
    assert set(head_tree(work, git_env)) == {b"a.md"}


@pytest.mark.parametrize(
    ("kind", "is_dir", "has_git", "head"),
    [("missing", False, False, None), ("no-git", True, False, None), ("unborn", True, True, None)],
)
def test_repository_kinds_without_a_commit(tmp_path: Path, git_env, kind, is_dir, has_git, head) -> None:
    repo = {"kind": kind, "commits": [{"files": {"a.md": "a\n"}}]}
    built = build_repo(model_of(load_scenario(scenario_file(tmp_path / "cases", repo))), tmp_path / "b", git_env)
    assert built.memory_dir.is_dir() == is_dir
    assert (built.memory_dir / ".git").exists() == has_git
    assert built.head is head


def test_memory_subdir_points_inside_the_repository(tmp_path: Path, git_env) -> None:
    repo = {"commits": [{"files": {"mem/a.md": "a\n", "other.md": "o\n"}}], "memory_subdir": "mem"}
    built = build_repo(model_of(load_scenario(scenario_file(tmp_path / "cases", repo))), tmp_path / "b", git_env)
    assert built.memory_dir == tmp_path / "b" / "memory" / "mem"
    head = open_committed_head(built.memory_dir, git_env)
    try:
        assert [e.path for e in head.entries] == [b"a.md"]  # listed relative to the directory, as ls-tree does
    finally:
        head.close()


def test_materialize_repo_builds_once_per_spec_and_reuses_it(tmp_path: Path) -> None:
    scenario = load_scenario(scenario_file(tmp_path / "cases", {"commits": [{"files": {"a.md": "a\n"}}]}))
    cache = tmp_path / "cache"
    first = materialize_repo(scenario, cache)
    marker = first.root / ".complete"
    assert marker.exists()
    stamp = marker.stat().st_mtime_ns
    second = materialize_repo(scenario, cache)
    assert (second.root, second.head) == (first.root, first.head)
    assert marker.stat().st_mtime_ns == stamp


def test_trees_are_sorted_the_way_git_sorts_them(tmp_path: Path, git_env) -> None:
    # git orders a tree's entries by name, a subtree's name compared as if it ended in "/":
    # "a-b" < "a.md" < "a/" < "a0" (git fsck --strict reports treeNotSorted otherwise).
    files = {"a/x.md": "x\n", "a.md": "a\n", "a-b": "ab\n", "a0": "0\n", "a/b/c.md": "c\n", "ab/x": "x\n"}
    scenario = load_scenario(scenario_file(tmp_path / "cases", {"commits": [{"files": files}]}))
    built = build_repo(model_of(scenario), tmp_path / "b", git_env)
    done = subprocess.run(
        ["git", "fsck", "--strict", "--no-dangling"], cwd=built.memory_dir, env=git_env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    top = git(built.memory_dir, git_env, "ls-tree", "--name-only", "HEAD").decode().split("\n")[:-1]
    assert top == ["a-b", "a.md", "a", "a0", "ab"]


def test_the_bytes_repository_passes_git_fsck(bytes_repo, git_env) -> None:
    done = subprocess.run(
        ["git", "fsck", "--strict", "--no-dangling"],
        cwd=bytes_repo.memory_dir,
        env=git_env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
