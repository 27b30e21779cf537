"""add-case: a real memory repository's history written as a scenario (through repo.snapshot), and the
check that the written case rebuilds it (same record from the Python port, same commit ids)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from harness.cases.load import load_scenario
from harness.cases.write import case_document, write_case
from harness.repo.build import materialize_repo
from harness.repo.gitenv import isolated_env
from harness.repo.snapshot import Snapshot, _git, _lines, read_snapshot
from harness.run.session import build_request
from harness.runners.python_port import PythonPortRunner
from harness.verdict.diff import outcome_diff
from letta_profiles import DEFAULT_PROFILE


@dataclass
class Verification:
    same_record: bool
    differing_fields: list[str]
    same_commit_ids: bool


def verify_case(
    case_path: Path, memory_dir: Path, source_commits: list[str], profile: str = DEFAULT_PROFILE
) -> Verification:
    """Build the written case and compile it and the original with the Python port (same inputs, the profile
    named `profile`)."""
    scenario = load_scenario(case_path)
    with tempfile.TemporaryDirectory(prefix="letta-add-case-") as tmp:
        cache = Path(tmp)
        env = isolated_env(cache / "home", ceiling=cache / "repos")
        repo = materialize_repo(scenario, cache)
        request = build_request(scenario, repo)
        rebuilt = PythonPortRunner(profile, env).compile(request)
        original_env = isolated_env(cache / "home")  # no ceiling: the original may sit anywhere
        original = PythonPortRunner(profile, original_env).compile(replace(request, memory_dir=memory_dir.resolve()))
        rebuilt_ids: list[str] = []
        if repo.head:
            listed = _git(repo.root / "memory", env, "rev-list", "--first-parent", "--reverse", "HEAD")
            rebuilt_ids = _lines(listed)
    fields = [diff.field for diff in outcome_diff(original, rebuilt, None)]
    same = rebuilt.status == original.status and not fields and rebuilt.thrown == original.thrown
    return Verification(same, fields, rebuilt_ids == source_commits)


def add_case(
    memory_dir: Path,
    case_id: str,
    out_dir: Path,
    *,
    tags: list[str] | None = None,
    head_only: bool = False,
    description: str | None = None,
    rules: tuple[str, ...] = (),
) -> tuple[Path, Snapshot]:
    """Snapshot memory_dir and write `<out_dir>/<case_id>.yaml`."""
    snapshot = read_snapshot(memory_dir, head_only=head_only)
    count = len(snapshot.model.commits)
    what = "HEAD" if head_only else f"{count} commit{'s' * (count != 1)}"
    doc = case_document(
        case_id,
        description or f"Snapshot of the memory repository {memory_dir.name!r} ({what}), by conformance add-case.",
        snapshot.model,
        tags=["snapshot", *(tags or [])],
        rules=rules,
    )
    return write_case(doc, out_dir), snapshot
