"""The pytest route (`pytest cases ...`): cases are items, `--impl` chooses the implementations under test, a
failure names the implementation, and a case no implementation serves is skipped as not applicable.

Runs pytest in a child process on a few real cases against the pinned default reference (integration:
it needs bun and the default release, which the test session installs).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAKE = f"cmd:{sys.executable} {ROOT / 'tests' / 'fake_impl.py'}"
PLANTED = f"cmd:{sys.executable} {ROOT / 'tests' / 'planted_bug_impl.py'}"

pytestmark = pytest.mark.integration


def pytest_cases(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def test_cases_pass_as_items_for_several_implementations() -> None:
    done = pytest_cases("cases/compile/bom-frontmatter.yaml", "cases/compile/fm-none.yaml", "--impl", "python",
                        "--impl", "cmd:python -m memfs_prompt serve")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_a_failure_names_the_implementation_under_test() -> None:
    done = pytest_cases("cases/compile/system-many-siblings.yaml", "--impl", PLANTED)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"] {PLANTED}: fail" in done.stdout


def test_a_case_no_implementation_serves_is_skipped_as_not_applicable() -> None:
    done = pytest_cases("cases/lifecycle/raw-system-edit.yaml", "--impl", f"{FAKE} --ops hello,compile")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout and "not applicable" in done.stdout
