"""The port's compiles made ahead in worker processes (harness.run.port_pool): an outcome is the in-process
runner's, and a pool that breaks leaves the compile to the session instead of failing the run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.core.model import CompileRequest
from harness.repo.gitenv import isolated_env
from harness.run.port_pool import PortPool
from harness.runners.python_port import PythonPortRunner

PROFILE = "letta-code@0.32.18"


def request_for(memory_dir: Path) -> CompileRequest:
    return CompileRequest(
        memory_dir=memory_dir, system="S", agent_id="agent-1", conversation_id="default", now="2026-01-01T00:00:00.000Z"
    )


def test_an_outcome_made_ahead_is_the_in_process_ports(tmp_path) -> None:
    env = isolated_env(tmp_path / "home", tmp_path)
    request = request_for(tmp_path / "missing")  # no repository: the port's own answer for it, either way
    with PortPool(1, env) as pool:
        pool.start([("k", [PROFILE], request)])
        made = pool.outcome("k", PROFILE)
        assert pool.outcome("k", PROFILE) is None  # each read once
        assert pool.outcome("never submitted", PROFILE) is None
    here = PythonPortRunner(PROFILE, env).compile(replace(request, profile=PROFILE))
    assert made is not None
    assert (made.status, made.record, made.thrown, made.error) == (here.status, here.record, here.thrown, here.error)


def test_a_broken_pool_leaves_the_compile_to_the_session_and_says_so_once(tmp_path, capsys) -> None:
    env = isolated_env(tmp_path / "home", tmp_path)
    with PortPool(1, env) as pool:
        pool.start([("warm", [PROFILE], request_for(tmp_path / "a"))])
        assert pool.outcome("warm", PROFILE) is not None  # the process is up
        for process in list(pool._pool._processes.values()):  # type: ignore[union-attr]
            process.kill()
            process.join()
        pool.start([("a", [PROFILE], request_for(tmp_path / "a")), ("b", [PROFILE], request_for(tmp_path / "b"))])
        assert pool.outcome("a", PROFILE) is None and pool.outcome("b", PROFILE) is None
    assert capsys.readouterr().err.count("compiling in process") == 1
