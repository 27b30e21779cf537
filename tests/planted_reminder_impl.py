"""A protocol implementation with a planted bug in the post-turn memory reminders (`memory_reminder`).

Run: `python tests/planted_reminder_impl.py`.

It runs the real `python -m memfs_prompt serve` loop (memfs_prompt.serve) with the dirty count of
`memory_reminder` made the way a port commonly makes it: untracked paths (`??` status lines) are left out, as
if the count were of changes to tracked files (`git diff HEAD`). Upstream counts every `git status --porcelain`
line (rule `reminder-dirty-count`), so the cases with untracked files fail, and a run names that rule
(tests/test_memory_reminders.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memfs_prompt import memory_reminders, serve
from memfs_prompt.profiles import DEFAULT
from memfs_prompt.quirks import js_trim

real_sync_status = memory_reminders.sync_status


def tracked_only_sync_status(memory_dir: Path, env: object) -> memory_reminders.SyncResult:
    """The bug: a dirty repository's count leaves out untracked paths."""
    result = real_sync_status(memory_dir, env)  # type: ignore[arg-type]
    if result.status != "dirty":
        return result
    status = memory_reminders._status_porcelain(memory_dir, env)  # type: ignore[arg-type]
    tracked = [line for line in status.split("\n") if js_trim(line) and not line.startswith("??")]
    return memory_reminders.SyncResult("dirty", f"{len(tracked)} uncommitted memory change(s).")


def main() -> int:
    memory_reminders.sync_status = tracked_only_sync_status  # type: ignore[assignment]
    info = {
        "implementation": "memfs_prompt with a planted reminder bug (tests/planted_reminder_impl.py)",
        "plantedBugs": {"untracked": "untracked paths left out of the dirty count"},
    }
    return serve.main(DEFAULT, info=info)


if __name__ == "__main__":
    sys.exit(main())
