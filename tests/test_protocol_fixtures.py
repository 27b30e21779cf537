"""The fake implementations the engine's `--impl cmd:` tests run: each fault of tests/fake_impl.py reaches the
client as the fault it names (never as an answer), unsupported ops and profiles are answered `unsupported`,
and tests/planted_bug_impl.py serves the port with memory labels sorted by code point, saying so in hello."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from compiler_cases import AGENT, CONVERSATION, NOW, SYSTEM, RepoSpec, build
from fake_reference import alive

from harness.acquire.manifest import REPO_ROOT
from harness.core.model import CompileRequest
from harness.runners.jsonl_process import JsonLinesProcess, ProtocolError
from memfs_prompt.protocol import FEATURES  # the fake answers hello with the port's features

FAKE = [sys.executable, str(REPO_ROOT / "tests" / "fake_impl.py")]
PLANTED = [sys.executable, str(REPO_ROOT / "tests" / "planted_bug_impl.py")]
SERVE = [sys.executable, "-m", "memfs_prompt", "serve"]


def process(argv: list[str], env: dict[str, str]) -> JsonLinesProcess:
    return JsonLinesProcess(argv, {**env, "PYTHONPATH": str(REPO_ROOT)}, cwd=REPO_ROOT)


def compile_wire(memory: Path, system: str = SYSTEM, **extra: Any) -> dict[str, Any]:
    return {**CompileRequest(memory, system, AGENT, CONVERSATION, NOW).to_wire(), **extra}


@pytest.fixture
def memory(tmp_path: Path, git_env: dict[str, str]) -> Path:
    return build(RepoSpec(files={"system/a.md": "a\n", "system/B.md": "b\n"}), tmp_path, git_env)


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("crash", r"exited \(code 3\) without answering"),
        ("exit", r"exited \(code 0\) without answering"),
        ("garbage", "answer is not JSON"),
        ("partial", "in the middle of an answer line"),
        ("wrong-id", "does not match request id"),
        ("stale-id", "does not match request id"),
    ],
)
def test_a_fault_named_in_the_request_is_that_fault_and_the_next_process_answers(
    memory: Path, git_env: dict[str, str], mode: str, message: str
) -> None:
    fake = process(FAKE, git_env)
    try:
        assert fake.request({"op": "hello"}, timeout=30)["ok"]
        with pytest.raises(ProtocolError, match=message):
            fake.request(compile_wire(memory, f"S FAULT:{mode} \n\n{{CORE_MEMORY}}"), timeout=30)
        honest = fake.request(compile_wire(memory), timeout=30)  # a new process, started for this request
        assert honest["ok"] and "<a>" in honest["record"]["content"]
    finally:
        fake.close()


def test_a_hang_is_killed_at_the_timeout_with_its_children(tmp_path: Path, memory: Path, git_env) -> None:
    fake = process([*FAKE, "--fault", "hang", "--state", str(tmp_path / "state")], git_env)
    try:
        assert fake.request({"op": "hello"}, timeout=30)["ok"]  # hello is spared by --fault
        with pytest.raises(ProtocolError, match="no answer within 2 s"):
            fake.request(compile_wire(memory), timeout=2)
    finally:
        fake.close()
    pids = [int(p) for p in (tmp_path / "state" / "hanging").read_text().split()]
    assert pids and not any(alive(pid) for pid in pids)


def test_twice_leaves_a_stale_answer_that_the_client_restarts_past(memory: Path, git_env) -> None:
    fake = process(FAKE, git_env)
    try:
        first = fake.request(compile_wire(memory, "S FAULT:twice \n\n{CORE_MEMORY}"), timeout=30)
        assert first["ok"]
        assert fake.request({"op": "hello"}, timeout=30)["ok"]
        assert fake.stale_restarts == 1
    finally:
        fake.close()


def test_exit_after_ends_the_process_mid_run(memory: Path, git_env) -> None:
    fake = process([*FAKE, "--exit-after", "2"], git_env)
    try:
        assert fake.request({"op": "hello"}, timeout=30)["ok"]
        assert fake.request(compile_wire(memory), timeout=30)["ok"]
        with pytest.raises(ProtocolError, match="without answering"):
            fake.request(compile_wire(memory), timeout=30)
    finally:
        fake.close()


def test_ops_and_profiles_it_does_not_claim_are_answered_unsupported(memory: Path, git_env) -> None:
    fake = process([*FAKE, "--ops", "hello,compile", "--profiles", "letta-code@0.33.6"], git_env)
    try:
        hello = fake.request({"op": "hello"}, timeout=30)
        assert hello["capabilities"] == {
            "ops": ["hello", "compile"],
            "lifecycle": False,
            "profiles": ["letta-code@0.33.6"],
            "features": list(FEATURES),
        }
        opened = fake.request({"op": "lifecycle_open", "session": "s1"}, timeout=30)
        assert opened == {"id": 2, "ok": False, "unsupported": 'op "lifecycle_open"'}
        other = fake.request(compile_wire(memory, profile="letta-code@0.25.3"), timeout=30)
        assert other["unsupported"] == 'profile "letta-code@0.25.3"'
        assert fake.request(compile_wire(memory, profile="letta-code@0.33.6"), timeout=30)["ok"]
        assert fake.request(compile_wire(memory, system="FAULT:unsupported"), timeout=30)["unsupported"]
    finally:
        fake.close()


def test_the_planted_bug_sorts_labels_by_code_point_and_says_so(tmp_path: Path, memory: Path, git_env) -> None:
    planted, honest = process(PLANTED, git_env), process(SERVE, git_env)
    sorted_alike = build(RepoSpec(files={"system/a.md": "a\n", "system/b.md": "b\n"}), tmp_path / "alike", git_env)
    try:
        assert "planted bug" in planted.request({"op": "hello"}, timeout=30)["info"]["implementation"]
        assert "plantedBug" not in honest.request({"op": "hello"}, timeout=30)["info"]
        bugged = planted.request(compile_wire(memory), timeout=30)["record"]["content"]
        correct = honest.request(compile_wire(memory), timeout=30)["record"]["content"]
        # ICU collation puts `a` before `B`; code points put `B` (U+0042) before `a` (U+0061)
        assert correct.index("<a>") < correct.index("<B>") and bugged.index("<B>") < bugged.index("<a>")
        same = [p.request(compile_wire(sorted_alike), timeout=30)["record"] for p in (planted, honest)]
        assert same[0] == same[1]
    finally:
        planted.close()
        honest.close()
