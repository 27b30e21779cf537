"""The memory write tool's op (memory_write, cases/ops/write-*.yaml): what a case may say and the loader's refusals
(line and fix), that its repository is built as a checkout, and what a release or profile without the tool
answers. What the tool itself does is checked against the releases by the corpus (`conformance matrix cases/ops
-k write`), never against values written here."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from harness.acquire.manifest import DRIVER_PATH
from harness.cases.load import load_scenario
from harness.core.model import ScenarioError
from harness.repo.build import materialize_repo
from memfs_prompt.profiles import resolve_profile
from memfs_prompt.protocol import Server

REPO = {"commits": [{"files": {"system/a.md": "---\ndescription: a\n---\nA\n"}}]}
TOOL = {"reason": "why", "file_path": "system/a.md", "old_string": "A", "new_string": "B"}


def write_case(directory: Path, args: object, folder: str = "ops") -> Path:
    path = directory / folder / "c.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"id": "c", "description": "d", "repo": REPO, "op": "memory_write", "args": args}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.line is not None, "every refusal names its line"
    return str(info.value)


def test_a_write_case_keeps_the_command_the_tools_arguments_in_order_and_the_agent(tmp_path: Path) -> None:
    args = {"command": "str_replace", "args": TOOL, "agentId": "agent-1", "agentName": None}
    scenario = load_scenario(write_case(tmp_path, args))
    assert (scenario.kind, scenario.op) == ("op", "memory_write")
    assert scenario.args == args and list(scenario.args["args"]) == list(TOOL)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({"args": TOOL}, "needs `command: <create|str_replace|...>`"),
        ({"command": 3, "args": TOOL}, "needs `command: <create|str_replace|...>`"),
        ({"command": "delete", "file_path": "a"}, "'file_path' is not a memory_write field"),
        ({"command": "delete", "args": ["reason"]}, "the tool's arguments as a mapping"),
        ({"command": "delete", "args": {"command": "insert"}}, "`command` goes one level up"),
        ({"command": "delete", "agentName": 7}, "args.agentName: a string, or null"),
        ({"command": "delete", "syncMode": "push"}, "args.syncMode: local, remote, or null"),
    ],
)
def test_a_bad_write_case_is_refused_at_its_line_with_the_fix(tmp_path: Path, args: object, says: str) -> None:
    assert says in refusal(write_case(tmp_path, args))


def test_a_writing_op_case_is_built_as_a_checkout_with_its_index(tmp_path: Path) -> None:
    scenario = load_scenario(write_case(tmp_path, {"command": "str_replace", "args": TOOL}))
    built = materialize_repo(scenario, tmp_path / "cache")
    assert (built.memory_dir / "system" / "a.md").read_bytes() == b"---\ndescription: a\n---\nA\n"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=built.memory_dir, capture_output=True, check=True)
    assert status.stdout == b""  # HEAD checked out, index and all: the tool's clean-repository check passes


def test_a_profile_without_the_tool_answers_unsupported_with_the_release_that_removed_it(tmp_path: Path) -> None:
    server = Server(resolve_profile("letta-code@0.33.3"))
    answer = server.handle({"id": 1, "op": "memory_write", "memoryDir": str(tmp_path), "command": "delete"})
    assert answer["ok"] is False and "has no memory write tool" in answer["unsupported"]


def test_a_write_whose_commit_meets_memfs_config_constraints_is_unsupported(tmp_path: Path) -> None:
    # the hook's .memfs.config.json constraints are not ported: the port says so rather than guess a verdict
    repo = {"commits": [{"files": {**REPO["commits"][0]["files"], ".memfs.config.json": "{}\n"}}]}
    path = write_case(tmp_path, {"command": "str_replace", "args": TOOL})
    path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), "repo": repo}, sort_keys=False))
    built = materialize_repo(load_scenario(path), tmp_path / "cache")
    server = Server(resolve_profile("letta-code@0.30.28"))
    request = {"id": 1, "op": "memory_write", "memoryDir": str(built.memory_dir), "command": "str_replace"}
    answer = server.handle({**request, "args": TOOL})
    assert answer["ok"] is False and ".memfs.config.json constraints" in answer["unsupported"]


def built_repo(tmp_path: Path, files: dict[str, str] | None = None, upstream: bool = False) -> Path:
    """REPO (with `files` added) built as a case's checkout; `upstream`: a bare remote it is in sync with."""
    repo = {"commits": [{"files": {**REPO["commits"][0]["files"], **(files or {})}}]}
    path = write_case(tmp_path, {"command": "str_replace", "args": TOOL})
    path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), "repo": repo}, sort_keys=False))
    memory_dir = materialize_repo(load_scenario(path), tmp_path / "cache").memory_dir
    if upstream:
        remote = tmp_path / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        subprocess.run(["git", "remote", "add", "origin", str(remote)], cwd=memory_dir, check=True)
        subprocess.run(["git", "push", "-q", "-u", "origin", "HEAD"], cwd=memory_dir, check=True, capture_output=True)
    return memory_dir


def remote_write(profile: str, memory_dir: Path, command: str, args: dict[str, object]) -> dict[str, object]:
    request = {"id": 1, "op": "memory_write", "memoryDir": str(memory_dir), "command": command, "args": args}
    return Server(resolve_profile(profile)).handle({**request, "syncMode": "remote"})


def test_a_sync_mode_other_than_local_or_remote_is_a_bad_request(tmp_path: Path) -> None:
    request = {"id": 1, "op": "memory_write", "memoryDir": str(tmp_path), "command": "delete", "syncMode": "push"}
    answer = Server(resolve_profile("letta-code@0.30.28")).handle(request)
    assert answer["ok"] is False and "syncMode" in answer["error"]


def test_a_remote_write_of_0_25_is_answered_up_to_its_first_push(tmp_path: Path) -> None:
    # 0.25.x's remote mode pushes pending commits, then its own commit: the port answers what comes before a push
    memory_dir = built_repo(tmp_path, upstream=True)
    refused = remote_write("letta-code@0.25.3", memory_dir, "rename", {"reason": "r", "file_path": "system/a.md"})
    assert refused["ok"] is True and "thrown" in refused  # the arguments' check, nothing to push before it
    pushed = remote_write("letta-code@0.25.3", memory_dir, "str_replace", TOOL)
    assert pushed["ok"] is False and "pushes its commit" in pushed["unsupported"]


def test_a_remote_write_of_0_25_with_pending_commits_is_unsupported_before_it_writes(tmp_path: Path) -> None:
    memory_dir = built_repo(tmp_path, upstream=True)
    (memory_dir / "system" / "b.md").write_text("---\ndescription: b\n---\n")
    subprocess.run(["git", "add", "-A"], cwd=memory_dir, check=True)
    subprocess.run(["git", "commit", "-qm", "pending"], cwd=memory_dir, check=True, capture_output=True)
    answer = remote_write("letta-code@0.25.3", memory_dir, "str_replace", TOOL)
    assert answer["ok"] is False and "pushes the 1 pending commit(s) first" in answer["unsupported"]
    assert (memory_dir / "system" / "a.md").read_text() == "---\ndescription: a\n---\nA\n"  # nothing written


def test_a_remote_write_to_a_memfs_v2_repository_is_unsupported_from_0_31_12(tmp_path: Path) -> None:
    # a remote backend's tool writes memfs-v2 where MEMORY.md is (detectMemoryFormat(dir, false)): not ported
    memory_dir = built_repo(tmp_path, {"MEMORY.md": "---\ndescription: root\n---\n"})
    answer = remote_write("letta-code@0.31.12", memory_dir, "str_replace", TOOL)
    assert answer["ok"] is False and "memfs-v2 format" in answer["unsupported"]
    assert "written" in remote_write("letta-code@0.30.28", memory_dir, "str_replace", TOOL)  # v1 to 0.30.28


def driver_answer(bundle: Path, request: dict[str, object]) -> dict[str, object]:
    """The reference driver's answer to one request, on the release bundle `bundle`."""
    from harness.acquire.releases import ensure_bun

    done = subprocess.run(
        [str(ensure_bun()), "--no-install", str(DRIVER_PATH), str(bundle)],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    answer: dict[str, object] = json.loads(done.stdout.splitlines()[0])
    return answer


@pytest.mark.integration
def test_a_release_whose_remote_mode_pushes_answers_unsupported(
    tmp_path: Path, release_bundle: Callable[[str], Path]
) -> None:
    request = {"id": 1, "op": "memory_write", "memoryDir": str(tmp_path), "command": "delete", "syncMode": "remote"}
    answer = driver_answer(release_bundle("0.25.3"), request)
    assert answer["ok"] is False and "pushes under a remote MemFS backend" in answer["unsupported"]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("release", "says"),
    [
        ("pypi:0.33.3", "letta-code 0.33.3 has no memory write tool (no src/tools/impl/memory.ts or "),
        ("pypi:0.34.7", "its src/tools/impl/memory.ts has no applyMemoryCommand (the read-only memory view tool)"),
    ],
)
def test_a_release_without_the_tool_says_which_module_it_lacks(
    tmp_path: Path, release_bundle: Callable[[str], Path], release: str, says: str
) -> None:
    request = {"id": 1, "op": "memory_write", "memoryDir": str(tmp_path), "command": "delete", "args": {}}
    answer = driver_answer(release_bundle(release), request)
    assert answer["ok"] is False and says in answer["unsupported"]
