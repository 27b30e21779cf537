"""A merge, rebase or cherry-pick stopped on its conflicts: a case's `repo.in_progress`, made with real git.

Owns the one state of a repository the object writer cannot write by itself: the git directory's record of
an unfinished operation (`MERGE_HEAD`, `rebase-merge/` or `rebase-apply/`, `CHERRY_PICK_HEAD`) with the
index's unmerged stages and the work tree's conflict markers. git makes them, in the built checkout, under the
isolated environment (pinned dates, so a commit a rebase replays before it stops has the same id every run),
with a fixed identity. The operation must stop: one that finishes (no conflict, a fast-forward) leaves no
state, and the build says so with the fix.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.core.repomodel import InProgress

IDENTITY = ("-c", "user.name=conformance", "-c", "user.email=conformance@example.invalid")
# what each operation leaves in the git directory while it is unfinished
MARKERS = {
    "merge": ("MERGE_HEAD",),
    "rebase": ("rebase-merge", "rebase-apply"),
    "cherry-pick": ("CHERRY_PICK_HEAD",),
}


class InProgressError(RuntimeError):
    """The operation a case asked for did not stop where the case needs it."""


def start(repo_dir: Path, git_dir: Path, operation: InProgress, commit_ids: list[str], env: dict[str, str]) -> None:
    """Run the operation in the checkout at `repo_dir` (HEAD on the case's branch) and check it stopped."""
    target = commit_ids[operation.commit - 1]
    if operation.kind == "merge":
        args = ["merge", "--no-ff", "--no-commit", target]
    elif operation.kind == "rebase":
        args = ["rebase", *(["--apply"] if operation.backend == "apply" else []), target]
    else:
        args = ["cherry-pick", target]
    done = subprocess.run(["git", *IDENTITY, *args], cwd=repo_dir, env=env, capture_output=True, check=False)
    if not any((git_dir / marker).exists() for marker in MARKERS[operation.kind]):
        said = (done.stdout + done.stderr).decode("utf-8", "replace").strip().splitlines()
        raise InProgressError(
            f"in_progress: `git {' '.join(args[:-1])} <commit {operation.commit}>` did not stop "
            f"({said[-1] if said else 'no output'}); make commit {operation.commit} and HEAD change the same "
            "lines of a file, so that the operation stops on a conflict"
        )
