"""Materializing a repository model (core.repospec's interpretation of a case): real git objects with
deterministic authors and dates, cached by the digest of the case's spec.

Owns what lands on disk, and that nothing lands outside the repository (`_inside` refuses a path
whose directories lead out, through a symlink or otherwise). A work tree is written only when the
case needs one (needs_worktree): compilers read HEAD. Objects are written straight into the object
database (repo.objects); the layout, HEAD and own configuration of the repository are repo.shape's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.core.model import Scenario
from harness.core.repomodel import (
    DEFAULT_MTIME_NS,
    MODE_EXEC,
    MODE_GITLINK,
    MODE_LINK,
    Blob,
    CommitModel,
    RepoModel,
    WorktreeNoise,
)
from harness.core.repospec import model_of, path_problem, repo_digest, shape_of
from harness.repo import in_progress
from harness.repo import shape as shapes
from harness.repo.gitenv import isolated_env
from harness.repo.objects import ObjectWriter, nested_tree

__all__ = ["MaterializedRepo", "ObjectWriter", "build_repo", "materialize_repo", "nested_tree", "write_commits"]


@dataclass(frozen=True)
class MaterializedRepo:
    root: Path  # the workspace holding the repository
    memory_dir: Path  # the directory the compilers are pointed at
    head: str | None  # the last commit (refs/heads/main), whatever HEAD holds


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


LAYOUT_POLICY_FILE = "letta-memory-layout-policy"


def write_worktree(root: Path, files: dict[bytes, Blob]) -> None:
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
        if blob.mode == MODE_GITLINK:
            target.mkdir()  # a submodule that is not checked out: an empty directory
        elif blob.mode == MODE_LINK:
            os.symlink(os.fsdecode(blob.data), target)
        else:
            target.write_bytes(blob.data)
            target.chmod(0o755 if blob.mode == MODE_EXEC else 0o644)


def remove_from_worktree(root: Path, names: list[bytes]) -> None:
    for name in names:
        target = _inside(root, name)
        if target.is_symlink() or target.is_file():
            target.unlink()


def write_commits(writer: ObjectWriter, commits: list[CommitModel]) -> list[str]:
    """Store a history's commits in order, each with its parents (CommitModel.parent_positions); their ids.
    The same history always gives the same ids, so writing it again writes nothing new."""
    ids: list[str] = []
    for index, commit in enumerate(commits):
        parents = [ids[position] for position in commit.parent_positions(index)]
        ids.append(writer.commit(writer.tree(commit.files), parents, commit, index))
    return ids


def memory_dir_of(repo_dir: Path, memory_subdir: str | None, layout: str = "work-tree") -> Path:
    """The directory compilers are pointed at: the repository (its .git directory for layout git-dir),
    or its `memory_subdir`."""
    base = shapes.memory_base(repo_dir, layout)
    return _inside(base, memory_subdir.encode("utf-8")) if memory_subdir else base


def needs_worktree(model: RepoModel, checkout: bool) -> bool:
    """Compilers read HEAD: a work tree is written only when the case has one (uncommitted noise, no
    commits at all), or for a case that works in the checkout (`checkout`: a lifecycle probe, whose turn loop
    works there, or an op case, whose ops read and write the files)."""
    return checkout or model.kind in ("no-git", "unborn") or bool(model.worktree) or model.in_progress is not None


def _refuse_escapes(model: RepoModel) -> None:
    """Every name the model holds obeys core.repospec.path_problem (the loader checks the same, with lines)."""
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
    shape = model.shape
    repo_dir = dest / "memory"
    if model.kind == "missing":
        dest.mkdir(parents=True, exist_ok=True)
        return MaterializedRepo(dest, memory_dir_of(repo_dir, model.memory_subdir), None)
    repo_dir.mkdir(parents=True)
    if model.kind == "no-git":
        write_worktree(repo_dir, model.head)
        date_worktree(repo_dir, list(model.head), model.worktree.mtimes)
        memory_dir = memory_dir_of(repo_dir, model.memory_subdir)
        memory_dir.mkdir(parents=True, exist_ok=True)
        return MaterializedRepo(dest, memory_dir, None)
    writer = ObjectWriter(shapes.init(repo_dir, shape, env), shape.object_format)
    head, ids = None, []
    if model.kind == "git":
        ids = write_commits(writer, model.commits)
        head = ids[-1]
        shapes.set_head(writer, shape, head)
    worktree = worktree and shapes.has_work_tree(shape.layout)
    if worktree and model.kind == "git":
        subprocess.run(["git", "read-tree", "HEAD"], cwd=repo_dir, env=env, check=True, capture_output=True)
    if worktree:
        write_worktree(repo_dir, model.head)
        if model.in_progress is not None:  # before the noise: git refuses to merge over uncommitted changes
            in_progress.start(repo_dir, writer.git_dir, model.in_progress, ids, env)
        apply_worktree_noise(repo_dir, model.worktree, env)
        date_worktree(repo_dir, [*model.head, *model.worktree.files], model.worktree.mtimes)
    shapes.write_config(writer.git_dir, shape.config, env)  # last: core.bare=true stops read-tree and add
    if shape.layout_policy is not None:  # what upstream's installPreCommitHook writes beside the hooks
        (writer.git_dir / LAYOUT_POLICY_FILE).write_bytes(shape.layout_policy.encode("utf-8"))
    if head is not None and shape.missing_objects:  # after everything that reads them (read-tree, add)
        shapes.remove_objects(writer, head, shape.missing_objects, env)
    memory_dir = memory_dir_of(repo_dir, model.memory_subdir, shape.layout)
    memory_dir.mkdir(parents=True, exist_ok=True)
    return MaterializedRepo(dest, memory_dir, head)


def check_listing(memory_dir: Path, wanted: int, env: dict[str, str]) -> None:
    """A case's `listing: {bytes}` is what upstream's own listing command prints in the memory directory
    (AssertionError otherwise: the harness counted wrong, core.listing)."""
    done = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=memory_dir, env=env, capture_output=True, check=True
    )
    if len(done.stdout) != wanted:
        raise AssertionError(f"listing is {len(done.stdout)} bytes, not {wanted}: core.listing counted it wrong")


def date_worktree(root: Path, names: list[bytes], mtimes: dict[bytes, int]) -> None:
    """Give every file written under root its case's modification time (`worktree.mtimes`) or DEFAULT_MTIME_NS:
    upstream's Memory tool orders uncommitted entries by mtime, and a build must be the same on every machine.
    A symlink gets its own time (the tool reads its target's); a file since deleted is skipped."""
    for name in dict.fromkeys(names):
        target = _inside(root, name)
        if target.is_symlink() or target.is_file():
            when = mtimes.get(name, DEFAULT_MTIME_NS)
            os.utime(target, ns=(when, when), follow_symlinks=False)


def apply_worktree_noise(repo_dir: Path, noise: WorktreeNoise, env: dict[str, str]) -> None:
    """Uncommitted edits, deletions and untracked files: compilers read HEAD, so they must not matter."""
    write_worktree(repo_dir, noise.files)
    remove_from_worktree(repo_dir, list(noise.delete))
    if noise.stage and noise:  # everything (`stage: true`) or the paths listed (`stage: [...]`)
        paths = ["--", *(os.fsdecode(name) for name in noise.stage)] if isinstance(noise.stage, tuple) else []
        subprocess.run(["git", "add", "-A", *paths], cwd=repo_dir, env=env, check=True, capture_output=True)


def materialize_repo(scenario: Scenario, cache_root: Path) -> MaterializedRepo:
    """The scenario's repository, built once per spec digest under cache_root and reused after.

    Safe when several threads or processes (parallel cases, CI shards on one machine) want
    the same repository: each builds in its own staging directory, marked complete before
    it is renamed into place, and the first rename wins.
    """
    checkout = scenario.kind != "compile"
    # a lifecycle probe or an op case needs a checkout that a compile case of the same spec does not write: its own
    dest = cache_root / "repos" / (repo_digest(scenario.repo) + ("-checkout" if checkout else ""))
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
                built = build_repo(model, staging, env, worktree=needs_worktree(model, checkout))
                if model.shape.listing_bytes is not None:
                    check_listing(built.memory_dir, model.shape.listing_bytes, env)
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
    layout = shape_of(scenario.repo).layout
    memory_dir = memory_dir_of(repo_dir, scenario.repo.get("memory_subdir"), layout)
    return MaterializedRepo(dest, memory_dir, shapes.branch_tip(repo_dir, layout))
