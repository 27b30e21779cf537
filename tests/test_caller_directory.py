"""The implementation under test is the one the command names, and nothing a run starts writes in the caller's
directory (harness.runners.command: a `cmd:` program runs in an empty directory of its own, its command resolved
in the caller's first; references, the Letta server and the port's command line run in directories of the
harness's). Every command that starts a program is run from a scratch directory here and the directory compared
before and after; the Letta server and the real releases are not run here (a download each): the functions that
start them are checked for where they start them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import OFFLINE, git_env_for
from fake_reference import fake_bundle, install_fake_bun, write_cases
from test_implementations import TESTS, run

from harness.cli.main import main
from harness.core.model import Status
from harness.repo.gitenv import isolated_env
from harness.runners.command import CommandRunner, resolved_argv, resolved_search_path
from harness.runners.implementations import ImplContext, ImplSpec

# writes where it stands, as letta-code 0.25.x does (`.letta/.lettaignore`), then becomes the program named after it
LITTER = 'sh -c \'mkdir -p .letta && echo x > .letta/.lettaignore && exec "$0" "$@"\''


def tree(directory: Path) -> dict[str, int]:
    """Every path under `directory` (directories too) with its size, to compare before and after."""
    return {str(p.relative_to(directory)): p.stat().st_size if p.is_file() else -1 for p in directory.rglob("*")}


def order_cases(directory: Path) -> Path:
    """A case the planted bug (tests/planted_bug_impl.py: labels in code point order) fails, and one it passes."""
    cases = directory / "compile"
    cases.mkdir(parents=True)
    for case_id, names in {"exercises-order": ("B", "a"), "same-order": ("a", "b")}.items():
        files = "".join(f'        system/{name}.md: "{name}\\n"\n' for name in names)
        (cases / f"{case_id}.yaml").write_text(
            f"id: {case_id}\ndescription: d\nrepo:\n  commits:\n    - files:\n{files}"
        )
    return cases


def package(root: Path, body: str) -> Path:
    (root / "porty").mkdir(parents=True)
    (root / "porty" / "__init__.py").write_text("")
    (root / "porty" / "__main__.py").write_text(body)
    return root


def test_a_package_shadowed_by_the_callers_directory_is_not_the_one_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the program ran in the caller's directory, `python -m porty` found the caller's `porty` (the honest
    port) ahead of PYTHONPATH's (the planted bug), and the run passed a port that differs. Now the named one runs."""
    caller = package(tmp_path / "caller", "from memfs_prompt import serve\nraise SystemExit(serve.main())\n")
    named = package(
        tmp_path / "named",
        f"import runpy\nrunpy.run_path({str(TESTS / 'planted_bug_impl.py')!r}, run_name='__main__')\n",
    )
    cases = order_cases(tmp_path / "cases")
    monkeypatch.chdir(caller)
    impl = f"cmd:env PYTHONPATH={named} {sys.executable} -m porty"
    results = {r.case_id: r.status for r in run(tmp_path, [cases], impl)}
    assert results == {"exercises-order": Status.FAIL, "same-order": Status.PASS}


def test_a_relative_path_in_the_command_means_what_it_means_in_the_callers_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    caller = tmp_path / "caller"
    (caller / "bin").mkdir(parents=True)
    (caller / "bin" / "port.py").write_text(
        f"import runpy\nrunpy.run_path({str(TESTS / 'planted_bug_impl.py')!r}, run_name='__main__')\n"
    )
    (caller / "port.py").write_text("")
    monkeypatch.chdir(caller)
    assert resolved_argv(["./run-me", "bin/port.py", "port.py", "serve", "-m", "bin", "X=a/b", "-x"], caller) == [
        str(caller / "run-me"),
        str(caller / "bin" / "port.py"),
        str(caller / "port.py"),
        "serve",
        "-m",
        "bin",
        "X=a/b",
        "-x",
    ]
    assert resolved_search_path(f"lib{os.pathsep}{os.pathsep}/abs", caller) == f"{caller / 'lib'}{os.pathsep}/abs"
    cases = order_cases(tmp_path / "cases")
    results = {r.case_id: r.status for r in run(tmp_path, [cases], f"cmd:{sys.executable} bin/port.py")}
    assert results == {"exercises-order": Status.FAIL, "same-order": Status.PASS}


def test_a_cmd_program_runs_in_a_directory_of_its_own_removed_when_it_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    caller = tmp_path / "caller"
    caller.mkdir()
    monkeypatch.chdir(caller)
    home, ceiling = tmp_path / "home", tmp_path / "repos"
    context = ImplContext(isolated_env(home, ceiling), home / "impl", ceiling, 20.0)
    runner = CommandRunner(ImplSpec("cmd", f"{LITTER} {sys.executable} -m memfs_prompt serve"), context)
    runner.start()
    assert runner.start_error is None and runner.info.get("implementation") == "memfs_prompt"
    own = runner.workdir
    assert own is not None and (own / ".letta" / ".lettaignore").exists()  # what it wrote is in its own directory
    assert caller not in own.parents and own != caller
    runner.close()
    assert not own.exists()
    assert tree(caller) == {}


def littering(path: Path, target: str) -> Path:
    """An executable at `path` that writes where it stands, then becomes `target` with its arguments."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nmkdir -p .letta && echo x > .letta/.lettaignore\nexec {target} "$@"\n')
    path.chmod(0o755)
    return path


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A caller's directory holding only the cases; a fake bun that writes where it stands first on PATH, the cache
    and the fake bundle outside the caller's directory."""
    install_fake_bun(tmp_path / "fake")
    littering(tmp_path / "bin" / "bun", str(tmp_path / "fake" / "bun"))
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    caller = tmp_path / "caller"
    write_cases(caller / "cases", {"plain": "", "other": ""})
    monkeypatch.chdir(caller)
    return caller


def test_no_command_that_starts_a_program_writes_in_the_callers_directory(scratch: Path, tmp_path: Path) -> None:
    """run (the port in process, its command line, a `cmd:` program, the reference: the two programs write where
    they stand), diff-repo and show (a reference and the port), each from the caller's directory: nothing appears
    there (before, the `cmd:` program's `.letta/.lettaignore` did)."""
    bundle = f"bundle:{fake_bundle(tmp_path / 'b')}"
    memory = tmp_path / "memory"
    memory.mkdir()
    before = tree(scratch)
    litter = f"cmd:{LITTER} {sys.executable} -m memfs_prompt serve"
    assert (
        main(["run", "cases", "--reference", bundle, "--impl", "python", "--impl", "python-cli", "--impl", litter]) == 0
    )
    assert (tmp_path / "cache" / "home" / ".letta" / ".lettaignore").exists()  # the reference wrote in its home
    assert main(["diff-repo", str(memory), "--reference", bundle]) == 0
    assert main(["show", str(memory), "--reference", bundle]) == 0
    assert tree(scratch) == before


def test_the_letta_server_driver_starts_in_its_home_not_the_callers_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its pinned environment is not installed here (a download): its "python" is a program that writes where it
    stands and then serves the protocol; the runner's own start puts it in the harness's home."""
    from harness.runners.letta_server import LettaServerRunner

    caller = tmp_path / "caller"
    caller.mkdir()
    monkeypatch.chdir(caller)
    python = littering(tmp_path / "venv" / "python", f"{sys.executable} -m memfs_prompt serve #")
    home = tmp_path / "cache" / "home"
    runner = LettaServerRunner("0.16.8", home, tmp_path / "cache" / "repos", installer=lambda version: python)
    try:
        runner.start()
        assert runner.start_error is None and runner.info.get("implementation") == "memfs_prompt"
    finally:
        runner.close()
    assert (home / ".letta" / ".lettaignore").exists()
    assert tree(caller) == {}


@pytest.mark.skipif(OFFLINE, reason="needs the pinned bun (LETTA_CONFORMANCE_OFFLINE=1)")
def test_upstream_tests_writes_nothing_in_the_callers_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's case: `upstream-tests --impl "cmd:..."` run from a checkout left the release's
    `.letta/.lettaignore` there. On tests/test_upstream_tests.py's look-alike of letta-code (its own tests write
    `.letta/left-behind.json` where they run), with an implementation that writes where it stands."""
    from test_revision_build import Upstream
    from test_upstream_tests import IMPL, fixture_files

    upstream = Upstream(tmp_path / "letta-code", git_env_for(tmp_path / "home", tmp_path))
    upstream.commit("a tiny compiler and its tests", fixture_files())
    caller = tmp_path / "caller"
    caller.mkdir()
    monkeypatch.chdir(caller)
    impl = f"cmd:{LITTER} {sys.executable} {IMPL}"
    assert main(["upstream-tests", "--git", str(upstream.path), "--impl", impl, "-q"]) == 0, capsys.readouterr()
    assert capsys.readouterr().out.splitlines()[-1].startswith("upstream-tests: 5 passed, 0 failed")
    assert tree(caller) == {}
