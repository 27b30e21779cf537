"""The README's first screen: its two set-up commands are the ones CI runs, and they work where the system Python
is externally managed (PEP 668): nox goes into a virtual environment, never into the system's Python (issue 37,
item 7). The commands are parsed from README.md and from .ci/run, never copied here."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_set_up() -> list[str]:
    """The commands of the README's first ```sh block, each without its trailing comment."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block is not None, "README.md has no ```sh block"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.split("  #")[0].strip()]


def ci_commands() -> list[str]:
    """The commands .ci/run runs, one a line, without comments and without the subshell around a chain."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return [c[1:-1] if c.startswith("(") and c.endswith(")") else c for c in commands]


def nox_sessions() -> set[str]:
    """The sessions noxfile.py defines (read, not imported: the tests' environment has no nox)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    names = set()
    for function in tree.body:
        if isinstance(function, ast.FunctionDef):
            for decorator in function.decorator_list:
                call = decorator if isinstance(decorator, ast.Call) else None
                named = [k.value.value for k in call.keywords if k.arg == "name"] if call else []
                target = call.func if call else decorator
                if isinstance(target, ast.Attribute) and target.attr == "session":
                    names.add(str(named[0]) if named and isinstance(named[0], str) else function.name)
    return names


def test_the_readme_s_first_screen_has_two_set_up_commands_conformance_then_tests() -> None:
    commands = readme_set_up()
    assert len(commands) == 2, commands
    sessions = [shlex.split(command)[-1] for command in commands]
    assert sessions == ["conformance", "tests"] and set(sessions) <= nox_sessions()


def test_ci_runs_the_readme_s_two_set_up_commands_as_written_in_their_order() -> None:
    ci = ci_commands()
    positions = [ci.index(command) if command in ci else -1 for command in readme_set_up()]
    assert -1 not in positions, f".ci/run does not run {readme_set_up()[positions.index(-1)]!r} as written"
    assert positions == sorted(positions)


def test_the_set_up_commands_never_install_into_the_system_python() -> None:
    """PEP 668: `pip install` into an externally managed Python is refused, so nox goes into .venv and runs from
    there; each command makes .venv itself, so either one works first on a fresh machine."""
    for command in readme_set_up():
        steps = [shlex.split(step) for step in command.split("&&")]
        assert steps[0] == ["python3", "-m", "venv", ".venv"], command
        for step in steps[1:]:
            assert step[0].startswith(".venv/bin/"), f"{command}: {shlex.join(step)} runs outside .venv"
        assert not any("pip" in step and not step[0].startswith(".venv/") for step in steps), command
