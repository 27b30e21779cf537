"""The Python port run the way its users run it: one `python -m memfs_prompt compile ... --json` process per compile.

`harness.core.port_command.cli_args` is the one place that turns a compile request into that command line: the
reproduce commands of a report print it, and `PythonCliRunner` runs it (the mutation tool uses the
runner so that a mutant of memfs_prompt/cli.py can be killed).

What the command promises, checked here: exit 0 with the record on stdout as one line of JSON in
`json.dumps`'s default form (ASCII, `", "` and `": "`) and a newline; exit 1 with
`upstream throws: MESSAGE` on stderr where upstream throws; anything else is an error of the case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import letta_profiles
import memfs_prompt
from harness.core import protocol
from harness.core.model import CompileRequest, Outcome
from harness.core.port_command import cli_args
from harness.runners.implementations import ImplContext, ImplSpec
from harness.runners.python_port import PythonPortRunner
from harness.runners.wire import check_request
from memfs_prompt.profiles import Profile, resolve_profile
from memfs_prompt.skills_block import append_skills_for_profile

# The package the harness imported; the command runs with its parent first on PYTHONPATH, so the process
# compiles with the very same package (a mutant's copy, in the mutation tool), and the profile table it reads
# (letta_profiles, which a mutant's copy does not hold) after it. It runs in the compile's own scratch directory
# (empty: nothing there shadows the package, and nothing it writes lands in the checkout or the caller's).
PACKAGE_PARENT = Path(memfs_prompt.__file__).resolve().parents[1]
SEARCH_PATH = os.pathsep.join(
    dict.fromkeys(map(str, (PACKAGE_PARENT, Path(letta_profiles.__file__).resolve().parents[1])))
)
THROWS = "upstream throws: "


def argv_can_carry(text: str) -> bool:
    """Whether a command-line argument can hold `text` (no NUL, no lone surrogate)."""
    if "\x00" in text:
        return False
    try:
        os.fsencode(text)
    except UnicodeError:
        return False
    return True


def system_goes_in_a_file(system: str) -> bool:
    """A system prompt of several lines (or with a NUL) goes as `--system-file`, a one-line one as `--system`:
    the two ways users pass it, both exercised by the corpus."""
    return any(char in system for char in "\n\r\x00")


def utf8_can_carry(text: str) -> bool:
    """Whether `text` has UTF-8 bytes (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeError:
        return False
    return True


def outcome_of(returncode: int, stdout: bytes, stderr: bytes) -> Outcome:
    """Judge one finished process against what the command promises (module docstring)."""
    err = stderr.decode("utf-8", "replace")
    if returncode == 1 and err.startswith(THROWS):
        return Outcome("thrown", thrown=err[len(THROWS) :].rstrip("\n"), stderr=err)
    if returncode != 0:
        last = (err.strip().splitlines() or ["(no output)"])[-1]
        return Outcome("error", error=f"python -m memfs_prompt exited {returncode}: {last}", stderr=err)
    try:
        record = json.loads(stdout)
    except ValueError as error:
        return Outcome("error", error=f"stdout is not JSON: {error}", stderr=err)
    if not isinstance(record, dict) or stdout != (json.dumps(record) + "\n").encode("ascii"):
        return Outcome("error", error="stdout is not the record as one json.dumps line and a newline", stderr=err)
    return Outcome("ok", record=record, stderr=err)


class PythonCliRunner(PythonPortRunner):
    """The port's command line; lifecycle probes (which the command has no way to run) stay in process.

    A request with an input no argument can carry (a NUL, a lone surrogate) is compiled in process,
    with a note; a turn's `systemPromptWithSkills` is added to the command's record in
    process, as `PythonPortRunner` adds it.
    """

    def __init__(self, profile: Profile | str, git_env: dict[str, str] | None = None, timeout: float = 120.0) -> None:
        super().__init__(profile, git_env)
        self.name = f"python-cli:{self.profile.name}"
        self.timeout = timeout

    def compile(self, request: CompileRequest) -> Outcome:
        refused = check_request(request.to_wire())  # (harness.runners.wire)
        if refused is not None:
            return refused
        in_file = system_goes_in_a_file(request.system)
        carried = (request.agent_id, request.conversation_id, request.now, *(() if in_file else (request.system,)))
        if not all(map(argv_can_carry, carried)) or (in_file and not utf8_can_carry(request.system)):
            outcome = super().ask(request.to_wire())  # the port in process
            outcome.notes.append("no command-line argument can carry these inputs: compiled in process")
            return outcome
        started = time.perf_counter()
        env = {**(self.git_env or os.environ), "PYTHONPATH": SEARCH_PATH}
        with tempfile.TemporaryDirectory(prefix="letta-conformance-cli-") as scratch:
            system_file = None
            if in_file:
                system_file = Path(scratch) / "system.txt"
                system_file.write_bytes(request.system.encode("utf-8"))
            command = [
                sys.executable,
                "-m",
                "memfs_prompt",
                *cli_args(request.to_wire(), self.profile.name, system_file),
            ]
            try:
                done = subprocess.run(
                    command, cwd=scratch, env=env, capture_output=True, timeout=self.timeout, check=False
                )
            except subprocess.TimeoutExpired:
                return Outcome("error", error=f"python -m memfs_prompt did not finish within {self.timeout:g} s")
        outcome = outcome_of(done.returncode, done.stdout, done.stderr)
        if outcome.record is not None and request.client_skills is not None:
            outcome.record["systemPromptWithSkills"] = append_skills_for_profile(
                outcome.record["content"], request.client_skills.value, self.profile
            )
        outcome.elapsed_ms = (time.perf_counter() - started) * 1000
        return outcome

    def ask(self, request: dict[str, Any]) -> Outcome:
        """A lifecycle op in process (the command has no way to run one); any other op but `compile` (`compile`
        above) is not the command's: `unsupported`, never the in-process port's answer in its name."""
        if protocol.op_of(request).lifecycle:
            return super().ask(request)
        return Outcome("unsupported", error=f"python -m memfs_prompt compile has no {request['op']} op")

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "implementation": "python -m memfs_prompt compile"}


def make_runner(spec: ImplSpec, profile: str, context: ImplContext) -> PythonCliRunner:
    """`--impl python-cli`: one `python -m memfs_prompt compile` per request, under `profile`."""
    return PythonCliRunner(resolve_profile(profile), context.git_env)
