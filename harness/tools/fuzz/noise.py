"""Work-tree noise for op case strategies: uncommitted edits, new files, deletions, and what of them is staged.

Owns how the op strategies (harness.tools.fuzz.views, .worktrees, .staged) draw an op case's `repo.worktree`
(docs/cases.md, "The repository"): which committed files are edited and to what, which new files appear (never
where a committed file or directory is: one tree cannot hold both), which are deleted (never one the caller keeps,
such as the root index), and whether `git add -A` stages all of it, or only some paths. Each caller says what its
edits and new files hold; what only one of them needs (symlinks, mtimes) it adds itself. These are functions of
the caller's `draw` (inside its `@st.composite`), not strategies of their own, so that they add no level to
Hypothesis's record of the draws: a seed draws the same examples as when each strategy wrote them out itself.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from hypothesis import strategies as st


def conflicts(paths: set[str]) -> set[str]:
    """The paths that are also a directory of another path (one tree cannot hold both)."""
    directories = {p.rsplit("/", 1)[0] for p in paths if "/" in p}
    directories = {"/".join(d.split("/")[:i]) for d in directories for i in range(1, d.count("/") + 2)}
    return paths & directories


def noise(files: dict[str, Any], deleted: list[str], stage: bool | list[str] = False) -> dict[str, Any]:
    """The `worktree` mapping of these changes, leaving out what is empty (no change: `{}`)."""
    worktree: dict[str, Any] = {}
    if files:
        worktree["files"] = files
    if deleted:
        worktree["delete"] = deleted
    if stage and (files or deleted):
        worktree["stage"] = stage
    return worktree


def stagings(draw: st.DrawFn, changed: list[str], partial: bool = False) -> bool | list[str]:
    """What is staged of `changed` (nothing drawn when it is empty): nothing or everything (`stage: true`), or with
    `partial`, mostly everything and in one case in five some of the paths (`stage: [...]`, the rest stays unstaged
    or untracked)."""
    if not changed:
        return False
    if not partial:
        return draw(st.booleans())
    some = draw(st.lists(st.sampled_from(changed), min_size=1, max_size=len(changed), unique=True))
    return some if draw(st.integers(0, 4)) == 0 and len(some) < len(changed) else True


def worktree_changes(
    draw: st.DrawFn,
    committed: Collection[str],
    edit: Callable[[st.DrawFn, str], Any],
    new: tuple[Callable[[st.DrawFn], str], Callable[[st.DrawFn], Any]],
    most: tuple[int, int, int],
    keep: Collection[str] = (),
    rare: Callable[[st.DrawFn, set[str]], tuple[str, Any] | None] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Up to `most` = (edits, new files, deletions) changes of `committed`: the files written and the paths deleted
    (`noise(files, deleted, stagings(...))` is the `worktree`). An edited path holds what `edit(draw, path)` draws;
    a new file's path and content are what `new` = (path, content) draw, the content only for a path that fits
    the tree; `rare(draw, the paths so far)` may add one more that fits (None: it did not); `keep` are never
    deleted."""
    edits, news, deletions = most
    paths = sorted(committed)
    files: dict[str, Any] = {}
    for path in draw(st.lists(st.sampled_from(paths), max_size=edits, unique=True)) if paths else []:
        files[path] = edit(draw, path)
    new_path, new_content = new
    for _ in range(draw(st.integers(0, news))):
        path = new_path(draw)
        if path not in committed and not conflicts({*committed, *files, path}):
            files[path] = new_content(draw)
    if rare is not None and (extra := rare(draw, {*committed, *files})) is not None:
        files[extra[0]] = extra[1]
    left = [p for p in paths if p not in files and p not in keep]
    deleted = draw(st.lists(st.sampled_from(left), max_size=deletions, unique=True)) if left else []
    return files, deleted
