"""Materializing a repository model (repo.spec's interpretation of a case): real git objects with
deterministic authors and dates, cached by the digest of the case's spec.

Owns what lands on disk, and that nothing lands outside the repository (`_inside` refuses a path
whose directories lead out, through a symlink or otherwise). A work tree is written only when the
case needs one (needs_worktree): compilers read HEAD. Objects are written straight into the object
database as loose objects (no `git add`, so no autocrlf, filters, hooks or name restrictions of the
porcelain; faster than any library measured, docs/reliability.md); names are raw bytes; trees are
sorted the way git sorts them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.model import MODE_EXEC, MODE_LINK, MODE_TREE, Blob, CommitModel, RepoModel, Scenario, WorktreeNoise
from harness.repo.gitenv import isolated_env
from harness.repo.spec import model_of, next_state, path_problem, repo_digest

AUTHOR = b"Conformance Bot <bot@letta-conformance.invalid>"
EPOCH = 1767225600  # 2026-01-01T00:00:00Z; commit n is dated EPOCH + n minutes


@dataclass(frozen=True)
class MaterializedRepo:
    root: Path  # the workspace holding the repository
    memory_dir: Path  # the directory the compilers are pointed at
    head: str | None


def _tree_sort_key(item: tuple[bytes, Any]) -> bytes:
    name, value = item
    return name + (b"/" if isinstance(value, dict) else b"")


def _store(git_dir: Path, kind: bytes, data: bytes) -> bytes:
    """Write one loose object (zlib of `<kind> <size>\\0<data>`); return its binary sha."""
    raw = kind + b" " + str(len(data)).encode("ascii") + b"\0" + data
    sha = hashlib.sha1(raw).digest()
    path = git_dir / "objects" / sha[:1].hex() / sha[1:].hex()
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(zlib.compress(raw, 1))
    return sha


def nested_tree(files: dict[bytes, Blob]) -> dict[bytes, Any]:
    """Flat `a/b/c` paths -> nested dicts of directory name -> subtree or Blob."""
    nested: dict[bytes, Any] = {}
    for path, blob in files.items():
        parts = path.split(b"/")
        node = nested
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = blob
    return nested


def _write_tree(repo: Path, files: dict[bytes, Blob]) -> bytes:
    """Store blobs and nested trees; return the root tree's binary sha."""
    nested = nested_tree(files)

    def store(node: dict[bytes, Any]) -> bytes:
        body = bytearray()
        for name, value in sorted(node.items(), key=_tree_sort_key):
            if isinstance(value, dict):
                body += MODE_TREE + b" " + name + b"\0" + store(value)
            else:
                sha = _store(repo, b"blob", value.data)
                body += value.mode + b" " + name + b"\0" + sha
        return _store(repo, b"tree", bytes(body))

    return store(nested)


def _write_commit(repo: Path, tree: bytes, parent: str | None, commit: CommitModel, index: int) -> str:
    default = AUTHOR + f" {EPOCH + 60 * index} +0000".encode()
    author = commit.author.encode("utf-8") if commit.author is not None else default
    committer = commit.committer.encode("utf-8") if commit.committer is not None else default
    message = commit.message if commit.message is not None else f"commit {index + 1}"
    lines = [b"tree " + tree.hex().encode()]
    if parent:
        lines.append(b"parent " + parent.encode())
    lines += [b"author " + author, b"committer " + committer, b"", message.encode("utf-8")]
    data = b"\n".join(lines) + b"\n"
    return _store(repo, b"commit", data).hex()


class EscapeError(OSError):
    """A path that would lead out of the repository (through `..` or a symlink): never written or removed."""


def _inside(root: Path, name: bytes) -> Path:
    """root/name, refusing any path whose directories leave root (a symlinked directory, `..`, an absolute path)."""
    target = root / os.fsdecode(name)
    real_root = os.path.realpath(root)
    parent = os.path.realpath(target.parent)
    if os.path.commonpath([real_root, parent]) != real_root:
        raise EscapeError(f"{os.fsdecode(name)!r} leads out of the repository; not written")
    return target


def _clear(target: Path) -> None:
    """Remove what is at target (a file, a symlink, or a directory a file now replaces)."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)


def _write_worktree(root: Path, files: dict[bytes, Blob]) -> None:
    """Write files under root; a file where a directory is needed (or the reverse) is replaced."""
    for path, blob in files.items():
        parts = path.split(b"/")
        for depth in range(1, len(parts)):  # a file that is now a directory
            ancestor = _inside(root, b"/".join(parts[:depth]))
            if ancestor.is_symlink() or ancestor.is_file():
                ancestor.unlink()
        target = _inside(root, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        _clear(target)
        if blob.mode == MODE_LINK:
            os.symlink(os.fsdecode(blob.data), target)
        else:
            target.write_bytes(blob.data)
            target.chmod(0o755 if blob.mode == MODE_EXEC else 0o644)


def _remove_from_worktree(root: Path, names: list[bytes]) -> None:
    for name in names:
        target = _inside(root, name)
        if target.is_symlink() or target.is_file():
            target.unlink()


def append_commit(
    repo_dir: Path, state: dict[bytes, Blob], commit: dict[str, Any], index: int
) -> tuple[dict[bytes, Blob], str]:
    """Commit one more scenario commit on top of HEAD (a lifecycle step); commit `index` sets its date.
    The work tree follows: files the commit removes are removed, the others written."""
    repo = repo_dir / ".git"
    ref = repo / "refs" / "heads" / "main"
    after = next_state(state, commit)
    model = CommitModel(after, commit.get("message"), commit.get("author"), commit.get("committer"))
    head = _write_commit(repo, _write_tree(repo, after), ref.read_text().strip(), model, index)
    ref.write_text(head + "\n")
    _remove_from_worktree(repo_dir, [name for name in state if name not in after])
    _write_worktree(repo_dir, after)
    return after, head


def memory_dir_of(repo_dir: Path, memory_subdir: str | None) -> Path:
    """The directory compilers are pointed at: the repository, or its `memory_subdir`."""
    return _inside(repo_dir, memory_subdir.encode("utf-8")) if memory_subdir else repo_dir


def needs_worktree(model: RepoModel, lifecycle: bool) -> bool:
    """Compilers read HEAD: a work tree is written only when the case has one (uncommitted noise, no
    commits at all), or for a lifecycle probe (upstream's turn loop works in the checkout)."""
    return lifecycle or model.kind in ("no-git", "unborn") or bool(model.worktree)


def _refuse_escapes(model: RepoModel) -> None:
    """Every name the model holds obeys repo.spec.path_problem (the loader checks the same, with lines)."""
    names = [name for commit in model.commits for name in commit.files]
    names += [*model.worktree.files, *model.worktree.delete]
    if model.memory_subdir:
        names.append(model.memory_subdir.encode("utf-8"))
    for name in names:
        problem = path_problem(name)
        if problem:
            raise EscapeError(f"{os.fsdecode(name)!r} {problem}; nothing outside the repository is written")


def build_repo(model: RepoModel, dest: Path, env: dict[str, str], *, worktree: bool = True) -> MaterializedRepo:
    """Build a repository model at dest/memory (dest must be empty); its work tree only when `worktree`."""
    _refuse_escapes(model)
    repo_dir = dest / "memory"
    memory_dir = memory_dir_of(repo_dir, model.memory_subdir)
    if model.kind == "missing":
        dest.mkdir(parents=True, exist_ok=True)
        return MaterializedRepo(dest, memory_dir, None)
    repo_dir.mkdir(parents=True)
    if model.kind == "no-git":
        _write_worktree(repo_dir, model.head)
        memory_dir.mkdir(parents=True, exist_ok=True)
        return MaterializedRepo(dest, memory_dir, None)
    subprocess.run(
        ["git", "init", "-q", "--template=", "--initial-branch=main", str(repo_dir)],
        env=env,
        check=True,
        capture_output=True,
    )  # no template: no sample hooks to copy (and delete) for every repository
    repo = repo_dir / ".git"
    head = None
    if model.kind == "git":
        for index, commit in enumerate(model.commits):
            head = _write_commit(repo, _write_tree(repo, commit.files), head, commit, index)
        assert head is not None
        (repo / "refs" / "heads" / "main").write_text(head + "\n")
        if worktree:
            subprocess.run(["git", "read-tree", "HEAD"], cwd=repo_dir, env=env, check=True, capture_output=True)
    if worktree:
        _write_worktree(repo_dir, model.head)
        _apply_worktree_noise(repo_dir, model.worktree, env)
    memory_dir.mkdir(parents=True, exist_ok=True)
    return MaterializedRepo(dest, memory_dir, head)


def _apply_worktree_noise(repo_dir: Path, noise: WorktreeNoise, env: dict[str, str]) -> None:
    """Uncommitted edits, deletions and untracked files: compilers read HEAD, so they must not matter."""
    _write_worktree(repo_dir, noise.files)
    _remove_from_worktree(repo_dir, list(noise.delete))
    if noise.stage and noise:
        subprocess.run(["git", "add", "-A"], cwd=repo_dir, env=env, check=True, capture_output=True)


def materialize_repo(scenario: Scenario, cache_root: Path) -> MaterializedRepo:
    """The scenario's repository, built once per spec digest under cache_root and reused after.

    Safe when several threads or processes (parallel cases, CI shards on one machine) want
    the same repository: each builds in its own staging directory, marked complete before
    it is renamed into place, and the first rename wins.
    """
    lifecycle = scenario.kind == "lifecycle"
    # a lifecycle probe needs a checkout that a compile case of the same spec does not write: its own copy
    dest = cache_root / "repos" / (repo_digest(scenario.repo) + ("-checkout" if lifecycle else ""))
    marker = dest / ".complete"
    env = isolated_env(cache_root / "home", ceiling=cache_root / "repos")
    if not marker.exists():
        if dest.exists():
            shutil.rmtree(dest, ignore_errors=True)  # a build interrupted part-way
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".build-", dir=dest.parent))
        try:
            model = model_of(scenario)
            try:
                build_repo(model, staging, env, worktree=needs_worktree(model, lifecycle))
            except OSError as error:  # the message names the repository, not the random staging directory
                raise type(error)(str(error).replace(str(staging), "<repository>")) from None
            (staging / ".complete").write_text("ok\n")
            try:
                staging.rename(dest)
            except OSError:
                if not marker.exists():
                    raise
                shutil.rmtree(staging, ignore_errors=True)  # another worker built it first
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    repo_dir = dest / "memory"
    memory_dir = memory_dir_of(repo_dir, scenario.repo.get("memory_subdir"))
    head_file = repo_dir / ".git" / "refs" / "heads" / "main"
    head = head_file.read_text().strip() if head_file.exists() else None
    return MaterializedRepo(dest, memory_dir, head)
