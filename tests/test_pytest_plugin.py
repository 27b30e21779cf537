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
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_cases_pass_as_items_for_several_implementations() -> None:
    done = pytest_cases(
        "cases/compile/bom-frontmatter.yaml",
        "cases/compile/fm-none.yaml",
        "--impl",
        "python",
        "--impl",
        "cmd:python -m memfs_prompt serve",
    )
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


def test_a_case_needing_a_feature_the_implementation_does_not_declare_is_skipped_as_not_applicable() -> None:
    done = pytest_cases("cases/compile/fm-none.yaml", "--impl", f"{FAKE} --features memfs-v2,metadata-block")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout and "does not declare feature memfs-v1" in done.stdout


SELECTIONS = ["collation", "COLLATION", "skills and not collation", "lifecycle and not golden", "Names or bom"]


def test_k_selects_the_same_cases_through_pytest_and_conformance_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One selection rule (harness.cases.select): tags, ids, file and folder names, in any case, on both routes;
    `-m TAG` is the cases with that tag."""
    from harness.cases.load import load_scenarios
    from harness.cli.main import main

    patterns = [
        "compile/bom*",
        "compile/*crlf*",
        "compile/*collation*",
        "compile/external-*",
        "compile/names-*",
        "compile/skills-*",
        "lifecycle/*",
    ]
    for pattern in patterns:
        for source in (ROOT / "cases").glob(pattern + ".yaml"):
            target = tmp_path / "cases" / source.parent.name / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # the rootdir, as a project's ini makes it
    for expression in SELECTIONS:
        assert main(["list", str(tmp_path / "cases"), "-k", expression]) == 0
        listed = sorted(line.split("\t")[0] for line in capsys.readouterr().out.splitlines())
        assert listed, expression
        assert collected(tmp_path, "-k", expression) == listed, expression
    tagged = sorted(s.id for s in load_scenarios([tmp_path / "cases"]).scenarios if "collation" in s.tags)
    assert collected(tmp_path, "-m", "collation") == tagged


def collected(root: Path, *selection: str) -> list[str]:
    """The case ids `pytest cases --collect-only` selects from `root`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "cases", *selection],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return sorted(line.split("::")[1] for line in done.stdout.splitlines() if "::" in line)


def test_the_readme_s_two_set_up_commands_give_the_pytest_route_a_pytest() -> None:
    """After the README's set-up (its first code block, exactly two commands), the pytest route it shows has a
    pytest: the venv `nox -s conformance` makes installs it, beside the project and its plugin."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    set_up = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert set_up is not None
    commands = [line.split("#")[0].strip() for line in set_up.group(1).splitlines() if line.split("#")[0].strip()]
    install = "python3 -m venv .venv && .venv/bin/pip install nox && .venv/bin/nox -s"
    assert commands == [f"{install} conformance", f"{install} tests"]
    pytest_line = next(line for line in readme.splitlines() if line.startswith("pytest cases"))
    assert ".nox/conformance/bin/pytest" in pytest_line

    import ast  # noxfile.py read, not imported: the test session's venv has no nox

    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    session = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "conformance")
    installed = [
        arg.value
        for call in ast.walk(session)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "install"
        for arg in call.args
        if isinstance(arg, ast.Constant)
    ]
    assert "-e" in installed and any(re.fullmatch(r"pytest(>=.*)?", str(a)) for a in installed)
