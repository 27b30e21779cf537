"""harness.runners.python_cli: the port through `python -m memfs_prompt compile` answers what the API answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compiler_cases import AGENT, CONVERSATION, NOW, SMALL, RepoSpec, build

from harness.core.model import ClientSkills, CompileRequest
from harness.core.port_command import cli_args
from harness.runners.python_cli import PythonCliRunner, outcome_of
from harness.runners.python_port import PythonPortRunner
from memfs_prompt import profile_for_release


@pytest.mark.parametrize(
    ("system", "extra"),
    [
        ("--- starts like an option\n\n{CORE_MEMORY}", {}),  # a value that starts with "-" stays a value
        ("S {CORE_MEMORY}", {"previous_message_count": 10**21, "now": "+002026-01-02T03:04:05Z"}),
        ("S {CORE_MEMORY}", {"include_memfs": False}),
        ("lone \ud800 surrogate {CORE_MEMORY}", {}),  # no argument can carry it: compiled in process
        ("S {CORE_MEMORY}", {"client_skills": ClientSkills([{"name": "s", "description": "d"}])}),
    ],
)
def test_the_command_line_answers_what_the_api_answers(tmp_path: Path, git_env, system: str, extra: dict) -> None:
    memory = build(RepoSpec(files=SMALL), tmp_path, git_env)
    request = CompileRequest(memory, system, AGENT, CONVERSATION, **{"now": NOW, **extra})
    profile = profile_for_release("0.32.18")
    cli = PythonCliRunner(profile, git_env).compile(request)
    api = PythonPortRunner(profile, git_env).compile(request)
    assert cli.status == api.status == "ok", cli.error
    assert cli.record == api.record
    assert bool(cli.notes) == ("\ud800" in system)


def test_a_throw_is_the_same_thrown_outcome(tmp_path: Path, git_env) -> None:
    memory = build(RepoSpec(files={"system/__proto__/__proto__/x.md": "boom\n"}), tmp_path, git_env)
    request = CompileRequest(memory, "S {CORE_MEMORY}", AGENT, CONVERSATION, NOW)
    profile = profile_for_release("0.32.18")
    cli = PythonCliRunner(profile, git_env).compile(request)
    api = PythonPortRunner(profile, git_env).compile(request)
    assert cli.status == api.status == "thrown"
    assert cli.thrown == api.thrown


def test_stdout_must_be_one_json_dumps_line() -> None:
    record = {"content": "é"}
    assert outcome_of(0, (json.dumps(record) + "\n").encode(), b"").record == record
    for stdout in (
        json.dumps(record).encode(),
        json.dumps(record, ensure_ascii=False).encode() + b"\n",
        json.dumps(record, indent=1).encode() + b"\n",
        b"[]\n",
        b"not json\n",
    ):
        assert outcome_of(0, stdout, b"").status == "error", stdout
    assert outcome_of(2, b"", b"usage: ...\nerror: --now: bad\n").error == (
        "python -m memfs_prompt exited 2: error: --now: bad"
    )


def test_cli_args_are_what_a_reproduce_command_prints() -> None:
    wire = CompileRequest(Path("/m"), "-s", "a", "c", NOW, float("nan"), include_memfs=False).to_wire()
    assert cli_args(wire, "letta-code@0.32.14") == [
        "compile",
        "/m",
        "--json",
        "--profile=letta-code@0.32.14",
        "--agent-id=a",
        "--conversation-id=c",
        "--system=-s",
        f"--now={NOW}",
        "--previous-message-count=NaN",
        "--no-memfs",
    ]
