"""A lifecycle probe's working copy, and the repository steps the harness makes in it between turns.

Owns what the steps `commit`, `amend`, `reset` and `break_head` do to the checkout (docs/lifecycle.md):

    commit      a new commit on the branch tip (or on its `parents`), the branch moved to it
    amend       HEAD rewritten: a new commit with HEAD's own parents and HEAD's tree changed, as
                `git commit --amend` makes it (the new revision is no descendant of the old one)
    reset       the branch back (or over) to commit N of the case, HEAD on the branch again, as
                `git checkout -B main <N>` (`git reset --hard`) leaves it
    edit        the work tree changed without a commit (files written, deleted, optionally staged, with pinned
                modification times; the form of a case's `repo.worktree`): HEAD and the branch stay, and the
                next `commit`, `amend` or `reset` makes the work tree that commit's tree again
    break_head  HEAD made unresolvable: `unborn` (its branch has no commit: `git checkout --orphan`,
                `git update-ref -d`), `missing-commit` (the branch names a commit that is not in the
                object database: a damaged clone), `empty-head` (the HEAD file is empty: a crash
                mid-write, and git no longer sees a repository)

Commits are written straight into the object database (repo.objects), numbered after the case's own
(commit n is dated EPOCH + n minutes), so every run and every side reads the same ids. After each step
the index and the work tree are the branch's commit (but for `break_head`, which touches refs only).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

from harness.core.model import Scenario
from harness.core.repomodel import Blob, CommitModel
from harness.core.repospec import commit_parents, model_of, next_state, worktree_noise
from harness.repo.build import (
    ObjectWriter,
    apply_worktree_noise,
    date_worktree,
    remove_from_worktree,
    write_commits,
    write_worktree,
)
from harness.repo.shape import BRANCH, git_dir_of

REPOSITORY_STEPS = ("commit", "amend", "reset", "edit", "break_head")
# what refs/heads/main names after `break_head: missing-commit`: an id no object of any case has
MISSING_COMMIT = hashlib.sha1(b"letta-conformance: a commit that is not in the object database").hexdigest()


class Checkout:
    """The case's commits (its own first, then those the steps made) and where the branch is."""

    def __init__(self, repo_dir: Path, scenario: Scenario, env: dict[str, str]) -> None:
        self.repo_dir, self.env = repo_dir, env
        model = model_of(scenario)
        self.git_dir = git_dir_of(repo_dir, model.shape.layout)  # <copy>/memory.git for a `.git` file
        self.writer = ObjectWriter(self.git_dir)
        self.commits: list[CommitModel] = list(model.commits)
        self.ids = write_commits(self.writer, self.commits)  # as the build wrote them: nothing new is stored
        self.tip: int | None = len(self.ids) - 1  # the commit the branch names; None once HEAD is broken
        self.worktree: dict[bytes, Blob] = self.commits[-1].files

    def run(self, kind: str, value: Any) -> str | None:
        """One repository step; what HEAD resolves to after it (None when it no longer names a commit)."""
        if kind == "commit":
            tip = self._tip(kind)
            parents = commit_parents(value)
            self._add(value, (tip,) if parents is None else parents)
        elif kind == "amend":
            tip = self._tip(kind)
            self._add(value, self.commits[tip].parent_positions(tip), base=self.commits[tip].files)
        elif kind == "reset":
            self._move(value - 1)
        elif kind == "edit":
            self._edit(value)
        else:
            self._break(value)
            return MISSING_COMMIT if value == "missing-commit" else None
        return self.ids[self.tip] if self.tip is not None else None

    def _tip(self, kind: str) -> int:
        if self.tip is None:  # the loader refuses this (harness.cases.checks): a step must reset first
            raise ValueError(f"{kind}: HEAD is broken; a reset step must come first")
        return self.tip

    def _add(self, spec: dict[str, Any], parents: tuple[int, ...], base: dict[bytes, Blob] | None = None) -> None:
        """Commit `spec`'s changes over `base` (default: the first parent's tree) with these parents."""
        if base is None:
            base = self.commits[parents[0]].files if parents else {}
        model = CommitModel(
            next_state(base, spec), spec.get("message"), spec.get("author"), spec.get("committer"), parents
        )
        index = len(self.ids)
        self.ids.append(self.writer.commit(self.writer.tree(model.files), [self.ids[p] for p in parents], model, index))
        self.commits.append(model)
        self._move(index)

    def _move(self, position: int) -> None:
        """The branch at commit `position`, HEAD on it, the index and the work tree its tree."""
        (self.git_dir / "refs" / "heads" / BRANCH).write_text(self.ids[position] + "\n")
        (self.git_dir / "HEAD").write_text(f"ref: refs/heads/{BRANCH}\n")
        files = self.commits[position].files
        remove_from_worktree(self.repo_dir, [name for name in self.worktree if name not in files])
        write_worktree(self.repo_dir, files)
        self.worktree, self.tip = files, position
        subprocess.run(
            ["git", "read-tree", self.ids[position]], cwd=self.repo_dir, env=self.env, check=True, capture_output=True
        )

    def _edit(self, spec: dict[str, Any]) -> None:
        """The work tree (and, with `stage`, the index) changed as a case's `repo.worktree` changes it, each file
        written dated by `mtimes` or DEFAULT_MTIME_NS; what the next move must clear is the files now there."""
        noise = worktree_noise(spec)
        apply_worktree_noise(self.repo_dir, noise, self.env)
        date_worktree(self.repo_dir, [*noise.files, *noise.mtimes], noise.mtimes)
        kept = {name: blob for name, blob in self.worktree.items() if name not in noise.delete}
        self.worktree = {**kept, **noise.files}

    def _break(self, how: str) -> None:
        ref = self.git_dir / "refs" / "heads" / BRANCH
        if how == "unborn":
            ref.unlink(missing_ok=True)
            (self.git_dir / "HEAD").write_text(f"ref: refs/heads/{BRANCH}\n")
        elif how == "missing-commit":
            ref.write_text(MISSING_COMMIT + "\n")
        else:  # empty-head
            (self.git_dir / "HEAD").write_text("")
        self.tip = None
