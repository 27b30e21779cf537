"""What no corpus case can ask `python -m memfs_prompt serve`: the defaults of a request that leaves fields out,
a request naming another profile than the server's, and how the transport splits lines.

The harness always sends `includeMemfs` and `delivery`, passes the reference's agent id, ends every line with
"\\n" and never sends a line that is blank but for characters JavaScript's `trim()` keeps, so these answers
are pinned here. Expected values: docs/protocol.md's text (the unit tests) and reference/driver.mjs on a
pinned release answering the very same bytes under bun (the integration tests).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from compiler_cases import AGENT, CONVERSATION, NOW, SMALL, SYSTEM, RepoSpec, build
from test_protocol import SERVE

from harness.acquire.manifest import DRIVER_PATH
from harness.core.reference import default_reference
from harness.repo.gitenv import isolated_env
from harness.runners.python_cli import PACKAGE_PARENT, SEARCH_PATH

RELEASE_0_25_3 = "npm:0.25.3"
DEFAULT_AGENT_ID = "agent-local-00000000-0000-4000-8000-000000000001"  # docs/protocol.md: randomUUID from 1
HELLO = b'{"id": 9, "op": "hello"}\n'
# U+001C..U+001F and U+0085 are whitespace to Python's str.strip(), not to JavaScript's trim(): such a line is
# a request (not JSON); U+3000 and U+FEFF are whitespace to trim(): such a line is blank.
NOT_BLANK = ["\x1c", "\x1f", "\x85", " \x1c "]
BLANK = ["\u3000", "\ufeff", " \t\r"]


def compile_line(memory: Path, request_id: int, **fields: Any) -> bytes:
    request = {
        "id": request_id,
        "op": "compile",
        "memoryDir": str(memory),
        "system": SYSTEM,
        "agentId": AGENT,
        "conversationId": CONVERSATION,
        "now": NOW,
        **fields,
    }
    return json.dumps(request, ensure_ascii=True).encode("ascii") + b"\n"


def answers_to(argv: list[str], data: bytes, env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    """Every answer line a program writes for `data` (its whole stdin), then end of input."""
    done = subprocess.run(argv, input=data, capture_output=True, env=env, cwd=cwd, timeout=300, check=False)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-2000:]
    assert done.stdout == b"" or done.stdout.endswith(b"\n"), done.stdout[-200:]
    return [json.loads(line) for line in done.stdout.splitlines()]


class Conversation:
    """One warm protocol process, asked one request at a time (so the test can commit between steps)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd)
        self.next_id = 1

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"id": self.next_id, **request}).encode("ascii") + b"\n")
        self.process.stdin.flush()
        self.next_id += 1
        line = self.process.stdout.readline()
        assert line.endswith(b"\n"), f"no answer line: {line!r}"
        answer: dict[str, Any] = json.loads(line)
        assert answer["ok"] and answer["id"] == self.next_id - 1, answer
        return answer

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


@pytest.fixture
def memory(tmp_path: Path, git_env: dict[str, str]) -> Path:
    return build(RepoSpec(files=SMALL), tmp_path, git_env)


@pytest.fixture
def serve_env(tmp_path: Path) -> dict[str, str]:
    """The served port is the package this test imported (run from its parent, which `python -m` puts first on
    sys.path): a mutated copy first on PYTHONPATH is what answers."""
    return {**isolated_env(tmp_path / "serve-home", tmp_path), "PYTHONPATH": SEARCH_PATH}


def driver_argv(reference_bun: Path, bundle: Path) -> list[str]:
    return [str(reference_bun), "--no-install", str(DRIVER_PATH), str(bundle)]


def driver_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    home = tmp_path / "driver-home"
    home.mkdir(exist_ok=True)
    return isolated_env(home, tmp_path), home


# --- compile: includeMemfs left out, a profile other than the server's ----------------------------------------


def default_compiles(memory: Path) -> bytes:
    return (
        compile_line(memory, 1)  # no includeMemfs: upstream's default, which projects the memory
        + compile_line(memory, 2, includeMemfs=True)
        + compile_line(memory, 3, includeMemfs=False)
    )


def test_a_compile_without_include_memfs_projects_the_memory(memory: Path, serve_env: dict[str, str]) -> None:
    absent, given, off = answers_to(SERVE, default_compiles(memory), serve_env, PACKAGE_PARENT)
    assert absent["record"] == given["record"] != off["record"]
    assert "I am a test agent." in absent["record"]["content"]


def test_a_request_profile_other_than_the_servers_selects_that_profile(memory: Path, serve_env: dict[str, str]) -> None:
    """The server runs the default profile (0.33.6 behaviour); a request naming 0.25.3 gets 0.25.3's record, which
    has no coreMemory (docs/protocol.md: coreMemory is 0.30.28 and later)."""
    served, old = answers_to(
        SERVE, compile_line(memory, 1) + compile_line(memory, 2, profile="letta-code@0.25.3"), serve_env, PACKAGE_PARENT
    )
    assert "coreMemory" in served["record"]
    assert "coreMemory" not in old["record"]


@pytest.mark.integration
def test_the_driver_gives_the_same_records_to_requests_that_leave_fields_out(
    tmp_path: Path, memory: Path, serve_env: dict[str, str], reference_bun: Path, release_bundle
) -> None:
    env, home = driver_env(tmp_path)
    served = answers_to(SERVE, default_compiles(memory), serve_env, PACKAGE_PARENT)
    driver = answers_to(
        driver_argv(reference_bun, release_bundle(default_reference())), default_compiles(memory), env, home
    )
    assert [a["record"] for a in served] == [a["record"] for a in driver]


@pytest.mark.integration
def test_a_request_for_0_25_3_gets_what_the_0_25_3_driver_answers(
    tmp_path: Path, memory: Path, serve_env: dict[str, str], reference_bun: Path, release_bundle
) -> None:
    request = compile_line(memory, 1, profile="letta-code@0.25.3")  # the driver is one release: it ignores profile
    env, home = driver_env(tmp_path)
    (driver,) = answers_to(driver_argv(reference_bun, release_bundle(RELEASE_0_25_3)), request, env, home)
    (served,) = answers_to(SERVE, request, serve_env, PACKAGE_PARENT)  # started with the default profile
    assert served["record"] == driver["record"]
    assert "coreMemory" not in driver["record"]  # not the default profile's record


# --- lifecycle_open without agentId and without delivery --------------------------------------------------------


def open_commit_turn(
    argv: list[str], env: dict[str, str], cwd: Path, memory: Path, git_env: dict[str, str], storage: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Open a session choosing nothing (agentId null, no delivery), commit a fact, take a turn: (open, turn)."""
    storage.mkdir()
    talk = Conversation(argv, env, cwd)
    try:
        opened = talk.ask(
            {
                "op": "lifecycle_open",
                "session": "s",
                "memoryDir": str(memory),
                "storageDir": str(storage),
                "system": SYSTEM,
                "now": NOW,
                "model": None,
                "agentId": None,
            }
        )
        talk.ask({"op": "lifecycle_step", "session": "s", "step": {"kind": "turn", "text": "hello"}})
        (memory / "system" / "human.md").write_text("---\ndescription: The user\n---\nfavourite colour is teal\n")
        for args in (["add", "-A"], ["commit", "--no-verify", "-q", "-m", "fact"]):
            subprocess.run(["git", *args], cwd=memory, env=git_env, check=True, capture_output=True)
        turn = talk.ask({"op": "lifecycle_step", "session": "s", "step": {"kind": "turn", "text": "again"}})
        talk.ask({"op": "lifecycle_close", "session": "s"})
    finally:
        talk.close()
    return opened, turn


def test_an_open_that_names_no_agent_and_no_delivery_gets_the_defaults(
    tmp_path: Path, memory: Path, serve_env: dict[str, str], git_env: dict[str, str]
) -> None:
    """docs/protocol.md: agentId null is the implementation's choice (the driver's first randomUUID, which the port
    takes), model null the default model, which `opened.model` names (docs/lifecycle.md: openai/gpt-5.5), delivery
    absent is mid-conversation (the update sent once as a system message, nothing stored)."""
    opened, turn = open_commit_turn(SERVE, serve_env, PACKAGE_PARENT, memory, git_env, tmp_path / "storage")
    assert opened["opened"]["agentId"] == DEFAULT_AGENT_ID
    assert opened["opened"]["model"] == turn["observed"]["executed"]["model"] == "openai/gpt-5.5"
    assert DEFAULT_AGENT_ID in opened["compiled"]["content"]
    executed, stored = turn["observed"]["executed"], turn["observed"]["stored"]
    assert "favourite colour is teal" in executed["midConversationSystemPrompt"]
    assert not any("favourite colour is teal" in m["text"] for m in stored)


@pytest.mark.integration
def test_the_driver_answers_an_open_that_names_no_agent_and_no_delivery_alike(
    tmp_path: Path, serve_env: dict[str, str], git_env: dict[str, str], reference_bun: Path, release_bundle
) -> None:
    """Both run on the same repository at the same path (built again between them: fixed dates, same commits)."""
    root = tmp_path / "repo"
    env, home = driver_env(tmp_path)
    argv = driver_argv(reference_bun, release_bundle(default_reference()))
    driver = open_commit_turn(
        argv, env, home, build(RepoSpec(files=SMALL), root, git_env), git_env, tmp_path / "driver-storage"
    )
    shutil.rmtree(root)
    served = open_commit_turn(
        SERVE,
        serve_env,
        PACKAGE_PARENT,
        build(RepoSpec(files=SMALL), root, git_env),
        git_env,
        tmp_path / "serve-storage",
    )
    assert served[0]["opened"] == driver[0]["opened"]
    assert served[0]["compiled"] == driver[0]["compiled"]
    for key in ("executed", "stored", "compiled", "conversationId"):
        assert served[1]["observed"][key] == driver[1]["observed"][key], key


# --- the transport: a last line without "\n", lines that only Python would call blank ---------------------------


def line_handling_input() -> bytes:
    lines = [c.encode("utf-8") + b"\n" for c in NOT_BLANK + BLANK]
    return HELLO + b"".join(lines) + HELLO + b'{"id": 10, "op": "hello"}'  # the last line has no "\n"


def test_serve_splits_lines_as_the_driver_does(serve_env: dict[str, str]) -> None:
    """docs/protocol.md: a blank line (JavaScript's trim()) is ignored; a line that is not JSON is answered with
    id null; a last line without "\\n" is not a request."""
    answers = answers_to(SERVE, line_handling_input(), serve_env, PACKAGE_PARENT)
    assert [a["id"] for a in answers] == [9, *[None] * len(NOT_BLANK), 9]
    assert all(not a["ok"] and "error" in a for a in answers[1:-1])


@pytest.mark.integration
def test_the_driver_splits_the_same_lines_alike(
    tmp_path: Path, serve_env: dict[str, str], reference_bun: Path, release_bundle
) -> None:
    env, home = driver_env(tmp_path)
    argv = driver_argv(reference_bun, release_bundle(default_reference()))
    driver = answers_to(argv, line_handling_input(), env, home)
    served = answers_to(SERVE, line_handling_input(), serve_env, PACKAGE_PARENT)
    assert [(a["id"], a["ok"]) for a in served] == [(a["id"], a["ok"]) for a in driver]
