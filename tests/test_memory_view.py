"""The Memory tool's view (op memory_view): the port's JavaScript string measures, the case format's pinned mtimes
and their refusals, and, end to end against a release, a port that lists entries by name only caught by the view
cases and explained as the ordering rule (tests/planted_rules_impl.py's `view-name-order`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.cases.load import load_scenario
from harness.core.model import ScenarioError
from harness.core.repomodel import DEFAULT_MTIME_NS
from harness.core.repospec import model_of, mtime_ns
from harness.repo.build import build_repo
from harness.repo.gitenv import isolated_env
from memfs_prompt.memory_view import js_length, js_slice, truncate_by_chars

ROOT = Path(__file__).resolve().parents[1]
REPO = {"commits": [{"files": {"MEMORY.md": "root\n", "p/a.md": "a\n", "p/b.md": "b\n"}}]}


def test_strings_are_measured_and_cut_in_utf16_code_units_as_javascript_does() -> None:
    assert js_length("a🙂") == 3
    assert js_slice("a🙂b", 0, 2) == "a\ud83d"  # a cut pair leaves a lone surrogate, as `slice` does
    assert js_slice("a🙂b", -2) == "\ude42b"
    cut = truncate_by_chars("x" * 2001, 2000)
    assert cut.startswith("x" * 1000 + "\n... [1 characters omitted] ...\n" + "x" * 1000)
    assert cut.endswith("\n\n[Output truncated: showing 2,000 of 2,001 characters.]")


def test_mtimes_read_seconds_and_iso_times_with_a_zone_only() -> None:
    assert mtime_ns(1767225660) == 1767225660 * 10**9
    assert mtime_ns("2026-01-01T00:01:00Z") == mtime_ns("2026-01-01T01:01:00+01:00") == 1767225660 * 10**9
    assert mtime_ns(0.5) == 5 * 10**8
    for bad in ("2026-01-01T00:00:00", True, -1, "soon"):
        with pytest.raises(ValueError):
            mtime_ns(bad)


def case_file(tmp_path: Path, worktree: dict[str, object]) -> Path:
    path = tmp_path / "ops" / "c.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    repo = {**REPO, "worktree": worktree}
    case = {"id": "c", "description": "d", "repo": repo, "op": "memory_view", "args": {"path": "p"}}
    path.write_text(yaml.safe_dump(case, sort_keys=False))
    return path


def test_every_file_the_builder_writes_has_its_pinned_mtime(tmp_path: Path) -> None:
    scenario = load_scenario(case_file(tmp_path, {"files": {"p/new.md": "n\n"}, "mtimes": {"p/b.md": 1767225700}}))
    built = build_repo(model_of(scenario), tmp_path / "built", isolated_env(tmp_path / "home"), worktree=True)
    times = {name: (built.memory_dir / name).stat().st_mtime_ns for name in ("MEMORY.md", "p/a.md", "p/new.md")}
    assert set(times.values()) == {DEFAULT_MTIME_NS}
    assert (built.memory_dir / "p/b.md").stat().st_mtime_ns == 1767225700 * 10**9


@pytest.mark.parametrize(
    ("worktree", "said"),
    [
        ({"mtimes": {"p/c.md": 1}}, "'p/c.md' is not in the work tree; date a file"),
        ({"mtimes": {"p": 1}}, "'p' is a directory; date a file"),
        ({"delete": ["p/a.md"], "mtimes": {"p/a.md": 1}}, "'p/a.md' is not in the work tree"),
        ({"mtimes": {"p/a.md": "2026-01-01T00:00:00"}}, "give seconds since the epoch (1767225660) or an ISO 8601"),
    ],
)
def test_a_bad_mtime_is_refused_at_its_line_with_the_fix(
    tmp_path: Path, worktree: dict[str, object], said: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(case_file(tmp_path, worktree))
    assert info.value.line is not None and said in str(info.value)


@pytest.mark.integration
def test_a_port_listing_entries_by_name_is_explained_by_the_ordering_rule(
    tmp_path: Path, release_bundle: object
) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv = [
        *(sys.executable, "-m", "harness.cli", "run", "cases/ops", "-k", "view", "--reference", "pypi:0.34.12"),
        *("--impl", "cmd:python tests/planted_rules_impl.py --bugs view-name-order", "--no-timing"),
        *("--report", str(tmp_path)),
    ]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 1, done.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    first = report["attribution"][0]
    assert first["rule"] == "view-order-commit-time" and first["failing"] == first["applicable"]  # every case fails
    failing = {r["case"] for r in report["results"] if r["status"] == "fail"}
    assert {"view-orders-by-commit-time", "view-first-listed-commit-wins", "view-no-git-orders-by-mtime"} <= failing
    assert not any(case.startswith("view-refuses-") for case in failing)  # the refusals do not order anything
