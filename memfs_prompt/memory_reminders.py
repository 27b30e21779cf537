"""The post-turn memory reminders: upstream's `runPostTurnMemorySync` of a local memory repository.

After a turn, the CLI's, headless and listener loops of letta-code 0.30.28 and later run
`runPostTurnMemorySync` (src/reminders/memory-git-sync.ts): `syncPendingMemoryCommitsAfterTurn`
(src/agent/memory-git.ts) reads the repository with `git status --porcelain`, and
`formatMemoryPostTurnSyncReminder` turns its result into a `<system-reminder>` the loop queues for the
next turn. `LocalBackend` itself never runs it (docs/lifecycle.md, "Post-turn reminders"). This module
owns the local (no remote, no push) part of both:

- `sync_status`: the result's status and summary. No `.git` in the directory: `skipped`, "Memory repo is
  not initialized."; a merge or a rebase in progress, or unmerged paths (`getMemoryConflictSummary`):
  `conflict`; any other status line: `dirty`, the number of lines (untracked files and directories
  count, one line each); else `skipped` (a local backend has no remote to push to).
- `format_reminder`: the reminder text for a profile (`Profile.memory_reminders`), None when none.

A git command that fails is upstream's exception (UpstreamError): only `git status` can (the git
directory's own lookup is caught upstream). The background repair worker of 0.33.0+ is not modelled: the
reminders are the ones upstream formats when no repair starts (the driver injects that hook).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from .errors import UpstreamError
from .git_command import run_git
from .profiles import Profile
from .quirks import decode_utf8_lossy, js_trim, js_trim_end

OPEN = "<system-reminder>"  # SYSTEM_REMINDER_OPEN (src/constants.ts)
CLOSE = "</system-reminder>"
NOT_INITIALIZED = "Memory repo is not initialized."
LOCAL_SKIPPED = "Local backend MemFS has no Letta remote to push."
MAX_LISTED_CONFLICTS = 10  # getMemoryConflictSummary names this many, then ", and N more"


@dataclass(frozen=True)
class SyncResult:
    """`MemoryPostTurnSyncResult` of a local-only agent (`localOnly` is always true here)."""

    status: str  # skipped | dirty | conflict
    summary: str


def sync_status(memory_dir: Path, env: Mapping[str, str] | None) -> SyncResult:
    """`syncPendingMemoryCommitsAfterTurn(agentId)` for a local backend agent whose memory is `memory_dir`."""
    if not (memory_dir / ".git").exists():  # existsSync follows a symlink; a `.git` file counts
        return SyncResult("skipped", NOT_INITIALIZED)
    status_out = _status_porcelain(memory_dir, env)
    conflict = conflict_summary(memory_dir, status_out, env)
    if conflict is not None:
        return SyncResult("conflict", conflict)
    if js_trim(status_out):
        changed = sum(1 for line in status_out.split("\n") if js_trim(line))
        return SyncResult("dirty", f"{changed} uncommitted memory change(s).")
    return SyncResult("skipped", LOCAL_SKIPPED)


def conflict_summary(memory_dir: Path, status_out: str, env: Mapping[str, str] | None) -> str | None:
    """`getMemoryConflictSummary(memoryDir, statusOut)`: the operation in progress (MERGE_HEAD first, then a
    `rebase-merge` or `rebase-apply` directory) and the unmerged paths, or None when neither."""
    operation = _operation_in_progress(memory_dir, env)
    conflicted = []
    for raw in status_out.split("\n"):
        line = js_trim_end(raw)
        if line and _is_unmerged(line[:2]):
            name = js_trim(line[3:])
            if name:
                conflicted.append(name)
    if operation is None and not conflicted:
        return None
    parts = [operation] if operation else []
    if conflicted:
        listed = ", ".join(conflicted[:MAX_LISTED_CONFLICTS])
        more = len(conflicted) - MAX_LISTED_CONFLICTS
        parts.append(f"conflicted file(s): {listed}" + (f", and {more} more" if more > 0 else ""))
    return "; ".join(parts)


def _is_unmerged(code: str) -> bool:
    """`isUnmergedStatusCode`: any `U`, or both added, or both deleted."""
    return "U" in code or code in ("AA", "DD")


def _operation_in_progress(memory_dir: Path, env: Mapping[str, str] | None) -> str | None:
    """What upstream finds in `git rev-parse --git-dir` (relative to the memory directory); a failure is none."""
    done = run_git(memory_dir, env, "rev-parse", "--git-dir")
    if done.returncode != 0:
        return None
    git_dir = Path(js_trim(decode_utf8_lossy(done.stdout)) or ".git")
    git_dir = git_dir if git_dir.is_absolute() else memory_dir / git_dir
    if (git_dir / "MERGE_HEAD").exists():
        return "merge in progress"
    if (git_dir / "rebase-merge").exists() or (git_dir / "rebase-apply").exists():
        return "rebase in progress"
    return None


def _status_porcelain(memory_dir: Path, env: Mapping[str, str] | None) -> str:
    """`runGit(memoryDir, ["status", "--porcelain"])`'s stdout (execFile's UTF-8 decoding); a failure throws."""
    done = run_git(memory_dir, env, "-c", "commit.gpgsign=false", "status", "--porcelain")
    if done.returncode != 0:
        detail = decode_utf8_lossy(done.stderr).strip()
        raise UpstreamError(f"Error: Command failed: git -c commit.gpgsign=false status --porcelain\n{detail}")
    return decode_utf8_lossy(done.stdout)


class _Texts(NamedTuple):
    """What `formatMemoryPostTurnSyncReminder` says in one release: the conflict reminder's headline and
    instruction, and what follows "Commit these memory changes locally when appropriate" in the dirty one."""

    conflict_headline: str
    conflict_action: str
    dirty_tail: str


def format_reminder(result: SyncResult, memory_dir: str, profile: Profile) -> str | None:
    """`formatMemoryPostTurnSyncReminder(result)` of `profile`'s release for a local-only agent: None for a
    clean (`skipped`) repository."""
    texts = _TEXTS[profile.memory_reminders]
    if result.status == "conflict":
        headline = f"MEMORY GIT CONFLICT: {texts.conflict_headline}"
        return _reminder(headline, memory_dir, result.summary, texts.conflict_action)
    if result.status == "dirty":
        headline = "MEMORY COMMIT NEEDED: The memory repository has uncommitted changes."
        action = f"Commit these memory changes locally when appropriate{texts.dirty_tail}"
        return _reminder(headline, memory_dir, result.summary, action)
    return None


def _reminder(headline: str, memory_dir: str, summary: str, action: str) -> str:
    return f"{OPEN}\n{headline}\n\nMemory directory: {memory_dir}\nStatus: {summary}\n\n{action}\n{CLOSE}"


_RETRY = "The harness will retry remote push after a future turn when the repo is clean."
_NO_PUSH = (
    " Do not run `git push` for MemFS sync; the harness pushes clean committed memory changes automatically"
    " for remote MemFS agents after turns."
)
_AUTOMATIC = "The memory repository has an unfinished merge or rebase that automatic repair could not resolve."
_FINISH = "stage the resolved files, and complete the merge/rebase or create the needed commit."
_STAGING = f", staging only the files you changed.{_NO_PUSH}"
# `Profile.memory_reminders` -> the release's texts (0.33.0 and 0.33.3 changed them; read from the bundles).
_TEXTS: dict[str, _Texts] = {
    "0.30.28": _Texts(
        "The memory repository needs manual conflict resolution.",
        f"Resolve the merge/rebase conflicts in the memory repository, {_FINISH} {_RETRY}",
        f".{_NO_PUSH}",
    ),
    "0.33.0": _Texts(_AUTOMATIC, f"Resolve the conflicts in the memory repository, {_FINISH} {_RETRY}", _STAGING),
    "0.33.3": _Texts(
        _AUTOMATIC,
        "Background repair could not resolve this state. Do not interrupt the current task or edit memory in"
        " the foreground. Leave the repository unchanged and report the blocked memory update to the user.",
        _STAGING,
    ),
}


def memory_reminder_record(memory_dir: str, profile: Profile, env: Mapping[str, str] | None) -> dict[str, str | None]:
    """`memory_reminder`'s answer fields (docs/protocol.md): the sync's status and summary, and the reminder a
    turn would queue (None when none)."""
    result = sync_status(Path(memory_dir), env)
    reminder = format_reminder(result, memory_dir, profile)
    return {"syncStatus": result.status, "syncSummary": result.summary, "reminder": reminder}
