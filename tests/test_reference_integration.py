"""The real reference: bun 1.4.5 running letta-code 0.32.18 through reference/driver.mjs.

Skipped only when LETTA_CONFORMANCE_OFFLINE=1. Otherwise a reference that cannot be fetched,
verified or started fails these tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from compiler_cases import AGENT, CONVERSATION, NOW, SMALL, SYSTEM, RepoSpec, build

from harness.core.model import CompileRequest, Scenario, Status
from harness.core.reference import ReferenceSpec
from harness.runners.bun_reference import BunReferenceRunner
from harness.runners.python_port import PythonPortRunner
from harness.verdict.judge import judge
from memfs_prompt import profile_for_release

pytestmark = pytest.mark.integration

RELEASE = "0.32.18"


@pytest.fixture
def reference(tmp_path: Path, reference_bun: Path, release_bundle):
    release_bundle(RELEASE)  # fetch and verify first, so a failure names the release
    runner = BunReferenceRunner(ReferenceSpec("npm", RELEASE), tmp_path / "ref-home", ceiling=tmp_path, timeout=120)
    runner.start()
    assert runner.start_error is None, runner.start_error
    yield runner
    runner.close()


def request_for(memory: Path) -> CompileRequest:
    return CompileRequest(memory, SYSTEM, AGENT, CONVERSATION, NOW)


def test_hello_names_the_upstream_symbols(reference: BunReferenceRunner) -> None:
    symbols = reference.info["symbols"]
    assert set(symbols) == {
        "compileLocalSystemPrompt",
        "initSystemPromptCompilation",
        "LocalBackend",
        "initLocalBackend",
        "DeterministicPongExecutor",
        "compileAvailableSkillsBlock",
        "appendAvailableSkillsBlock",
        # the memory tools' ops: the write tool and the post-turn sync (0.32.18 has both), and the module init,
        # backend and runtime context the Memory view would use
        "memoryWriteTool",
        "applyMemoryCommand",
        "initMemoryWriteTool",
        "initMemoryViewTool",
        "getBackend",
        "initBackend",
        "testSetBackend",
        "testOverrideGetClient",  # the API client a remote MemFS write asks for a token (memory_write, remote)
        "runWithRuntimeContext",
        "syncPendingMemoryCommitsAfterTurn",
        "runPostTurnMemorySync",
        "initMemoryGitSync",
        # the pre-commit hook the validate op installs, and the tree-constraints validator it runs
        "PRE_COMMIT_HOOK_SCRIPT",
        "MEMORY_CONSTRAINTS_VALIDATOR_SCRIPT",
        "MEMORY_CONSTRAINTS_VALIDATOR_NAME",
        "initMemoryGitHooks",
        # the client loop's reminders a lifecycle turn runs (the engine, its state, the permission mode it reads)
        "buildSharedReminderParts",
        "prependReminderPartsToContent",
        "initReminderEngine",
        "createSharedReminderState",
        "enqueueMemoryGitSyncReminder",
        "permissionMode",
    }
    assert symbols["compileLocalSystemPrompt"].startswith("compileLocalSystemPrompt")
    # the Memory view appears in 0.34.7: this release's memory.ts is the write tool
    assert [m.split(" ")[0] for m in reference.info["missing"]] == ["memoryViewTool", "memoryViewRender"]
    assert reference.info["bun"] == "1.4.5"
    assert reference.info["version"] == RELEASE
    assert reference.describe()["version"] == RELEASE


def test_compile_on_a_small_repo_matches_the_python_port(tmp_path, git_env, reference) -> None:
    memory = build(RepoSpec(files=SMALL, noise={"system/human.md": "uncommitted\n"}), tmp_path, git_env)
    request = request_for(memory)
    upstream = reference.compile(request)
    port = PythonPortRunner(profile_for_release(RELEASE), git_env).compile(request)
    assert upstream.status == "ok", upstream.error
    assert port.record == upstream.record
    assert list(port.record) == list(upstream.record)  # type: ignore[arg-type]
    scenario = Scenario("small", "d", tmp_path / "small.yaml", (), {}, {})
    assert judge(scenario, RELEASE, upstream, port)[0] == Status.PASS


def test_a_proto_path_reports_pollution_and_the_driver_restores_it_in_place(tmp_path, git_env, reference) -> None:
    polluting = build(
        RepoSpec(files={"system/__proto__/x.md": "polluting\n", "system/a.md": "a\n"}), tmp_path / "p", git_env
    )
    clean = build(RepoSpec(files={"system/a.md": "a\n"}), tmp_path / "c", git_env)
    starts = reference.process.starts
    outcome = reference.compile(request_for(polluting))
    assert outcome.polluted
    assert outcome.status in ("ok", "thrown")
    assert any("restored it in place" in note for note in outcome.notes)
    port = PythonPortRunner(profile_for_release(RELEASE), git_env).compile(request_for(polluting))
    assert port.status == outcome.status and port.record == outcome.record

    after = reference.compile(request_for(clean))
    assert after.status == "ok" and not after.polluted
    assert reference.process.starts == starts  # the same process, its built-ins put back
    # The process does not see the polluted prototype any more: same record as the port on the clean repo.
    assert after.record == PythonPortRunner(profile_for_release(RELEASE), git_env).compile(request_for(clean)).record


def test_conformance_diff_repo_exits_0_on_a_plain_repo(tmp_path, git_env, reference_bun, release_bundle) -> None:
    release_bundle(RELEASE)
    memory = build(RepoSpec(files=SMALL), tmp_path, git_env)
    env = {**os.environ}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "diff-repo", str(memory), "--reference", f"npm:{RELEASE}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("identical:")
