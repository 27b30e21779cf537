"""The records of a case's repository: trees of exact bytes per commit, the work tree noise, the shape.

Data only, standard library only (like harness.core.model, which the rest of the records live in), so the
loader, the builder, the fuzzer and the writers share them without cycles.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MODE_FILE, MODE_EXEC, MODE_LINK, MODE_TREE = b"100644", b"100755", b"120000", b"40000"
MODE_GITLINK = b"160000"  # a submodule entry: its data is a commit id in hex, or `commit:<n>` (the case's commit n)


@dataclass(frozen=True)
class Blob:
    mode: bytes
    data: bytes


@dataclass
class CommitModel:
    """One commit: the whole tree after it, and optionally its exact message, identities and parents."""

    files: dict[bytes, Blob]
    message: str | None = None
    author: str | None = None
    committer: str | None = None
    # the positions (0-based) of its parents among the model's commits; None: the commit before it (none for
    # the first), as a linear history has; () a root commit; two or more a merge
    parents: tuple[int, ...] | None = None

    def parent_positions(self, position: int) -> tuple[int, ...]:
        """Its parents' positions, when it is commit `position` (0-based) of its history."""
        if self.parents is not None:
            return self.parents
        return (position - 1,) if position > 0 else ()


@dataclass
class WorktreeNoise:
    """Uncommitted changes over HEAD: files written, paths deleted, and whether they are staged."""

    files: dict[bytes, Blob] = field(default_factory=dict)
    delete: tuple[bytes, ...] = ()
    stage: bool | tuple[bytes, ...] = False  # everything, or only these paths (written or deleted)
    # a work-tree file's modification time (nanoseconds since the epoch); every other file the builder writes
    # is dated DEFAULT_MTIME_NS, so that a build is the same bytes and times on every machine
    mtimes: dict[bytes, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.files or self.delete or self.mtimes)


#: the modification time of every work-tree file a case does not date (`worktree.mtimes`): 2026-01-01T00:00:00Z,
#: the default date of a case's first commit (repo.objects.EPOCH), so an undated file is never newer than it
DEFAULT_MTIME_NS = 1767225600 * 1_000_000_000


@dataclass(frozen=True)
class RepoShape:
    """How a repository is laid out and what its HEAD and own configuration are (docs/cases.md)."""

    layout: str = "work-tree"  # work-tree, bare, git-dir (the memory dir is .git), separate-git-dir
    object_format: str = "sha1"  # or sha256
    head: str = "branch"  # branch, detached, tag, tag-of-tag, tree
    config: tuple[tuple[str, str], ...] = ()  # (key, value) written into the repository's own config, in order
    listing_bytes: int | None = None  # `git ls-tree -r --name-only HEAD` prints exactly this many bytes
    missing_objects: tuple[str, ...] = ()  # HEAD, HEAD: or HEAD:<path> of the last commit, deleted after the build


@dataclass(frozen=True)
class InProgress:
    """A merge, rebase or cherry-pick left stopped on its conflicts after the commits (`repo.in_progress`):
    `commit` (1-based) is merged into HEAD, rebased onto, or picked; `backend` is the rebase's (merge or apply)."""

    kind: str  # merge, rebase, cherry-pick
    commit: int
    backend: str = "merge"


@dataclass
class RepoModel:
    """A scenario's repository as trees of exact bytes: what `kind` it is, each commit, the work tree noise."""

    commits: list[CommitModel] = field(default_factory=list)
    kind: str = "git"  # git, unborn, no-git, missing
    memory_subdir: str | None = None
    worktree: WorktreeNoise = field(default_factory=WorktreeNoise)
    shape: RepoShape = field(default_factory=RepoShape)
    in_progress: InProgress | None = None

    @property
    def head(self) -> dict[bytes, Blob]:
        return self.commits[-1].files if self.commits else {}
