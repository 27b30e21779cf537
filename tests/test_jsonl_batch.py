"""Runner.prefetch: a batch of compile requests sent before any answer is read gives the same outcomes as one
request at a time, whatever the process does mid-batch (a polluted answer ends it, a crash, garbage).

The process is tests/fake_reference.py's fake `bun` (answers from the Python port; `FAULT:<mode>` in a
request's system prompt picks its misbehaviour).
"""

from __future__ import annotations

from pathlib import Path

from fake_reference import fake_bundle, install_fake_bun

from harness.core.model import CompileRequest
from harness.core.repomodel import Blob, CommitModel, RepoModel
from harness.repo.build import build_repo
from harness.repo.gitenv import isolated_env
from harness.runners.jsonl_process import JsonLinesRunner


def _requests(tmp_path: Path, systems: list[str]) -> list[CompileRequest]:
    env = isolated_env(tmp_path / "home")
    repo = build_repo(
        RepoModel([CommitModel({b"system/a.md": Blob(b"100644", b"hello\n")})]), tmp_path / "r", env, worktree=False
    )
    return [CompileRequest(repo.memory_dir, s, "agent", "conv", "2026-01-02T03:04:05.678Z") for s in systems]


def _runner(tmp_path: Path) -> JsonLinesRunner:
    bun = install_fake_bun(tmp_path / "bin")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    runner = JsonLinesRunner("fake", [str(bun), "driver.mjs", str(fake_bundle(tmp_path / "bundle"))], env, timeout=30)
    runner.start()
    assert runner.start_error is None
    return runner


def test_a_batch_answers_as_one_request_at_a_time_does_through_pollution_crash_and_garbage(tmp_path: Path) -> None:
    faults = ["S FAULT:polluted", "S3", "S FAULT:crash", "S4", "S FAULT:garbage", "S5"]
    systems = [f"{s} {{CORE_MEMORY}}" for s in ["S0", "S1", "S2", *faults]]
    requests = _requests(tmp_path, systems)
    runner = _runner(tmp_path)
    try:
        one_by_one = [runner.compile(r) for r in requests]
        runner.prefetch(requests)
        batched = [runner.compile(r) for r in requests]
    finally:
        runner.close()
    assert [o.status for o in batched] == [o.status for o in one_by_one]
    assert [o.status for o in batched] == ["ok"] * 5 + ["error", "ok", "error", "ok"]
    assert [o.record for o in batched] == [o.record for o in one_by_one]
    assert batched[3].polluted and not batched[4].polluted  # answered by a fresh process
    assert all(o.record["content"].startswith(s.split()[0]) for o, s in zip(batched, systems, strict=True) if o.record)


def test_a_request_not_in_the_batch_waits_for_the_batch_and_is_answered(tmp_path: Path) -> None:
    requests = _requests(tmp_path, [f"S{i} {{CORE_MEMORY}}" for i in range(4)])
    runner = _runner(tmp_path)
    try:
        runner.prefetch(requests[:3])
        alone = runner.compile(requests[3])  # not prefetched: asked after the batch is answered
        batched = [runner.compile(r) for r in requests[:3]]
    finally:
        runner.close()
    assert alone.status == "ok" and alone.record["content"].startswith("S3")
    assert [o.record["content"][:2] for o in batched] == ["S0", "S1", "S2"]
