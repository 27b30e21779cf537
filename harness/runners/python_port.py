"""The Python port (memfs_prompt), run in process: a thin client of `memfs_prompt.protocol.Server`.

Each request goes to the server as the dict `python -m memfs_prompt serve` would parse from its line,
so the in-process port and the served port answer through one code path (docs/protocol.md). Answers
become outcomes through the one decoder every runner uses (harness.core.protocol.decode): `record` (with
`systemPromptWithSkills` merged in), `thrown`, or an error (`error`, or `unsupported` for an input the port
does not serve). A request no line
could carry (harness.runners.wire) is not given to the port: its outcome is the harness's error.
"""

from __future__ import annotations

import time
from typing import Any

from harness.core import protocol
from harness.core.model import CompileRequest, Outcome
from harness.runners.base import Runner
from harness.runners.implementations import ImplContext, ImplSpec
from harness.runners.wire import check_request
from memfs_prompt.collation import info as collation_info
from memfs_prompt.compiler import one_reading_of_head
from memfs_prompt.profiles import Profile, resolve_profile
from memfs_prompt.protocol import Server


class PythonPortRunner(Runner):
    def __init__(self, profile: Profile | str, git_env: dict[str, str] | None = None) -> None:
        """`profile`: a Profile, or a name the harness holds (resolved here, the only place that may)."""
        self.profile = resolve_profile(profile) if isinstance(profile, str) else profile
        self.git_env = git_env
        self.name = f"python:{self.profile.name}"
        self._server = Server(self.profile, git_env)

    def ask(self, request: dict[str, Any]) -> Outcome:
        """One request to the server; its answer decoded as every runner decodes one (harness.core.protocol)."""
        refused = check_request(request)  # what no line could carry is not given to the port either
        if refused is not None:
            return refused
        started = time.perf_counter()
        answer = self._server.handle(request)
        return protocol.decode(protocol.op_of(request), answer, (time.perf_counter() - started) * 1000)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "implementation": "memfs_prompt (in process)",
            "profile": self.profile.name,
            "collation": collation_info(),
        }


def compile_each(runs: list[tuple[PythonPortRunner, CompileRequest]]) -> list[Outcome]:
    """Each request compiled by its runner, every repository's HEAD read once (memfs_prompt.compiler
    .one_reading_of_head): for a caller that knows nothing changes the repositories meanwhile (harness.runners
    .port_pool, a case's compiles under each profile)."""
    with one_reading_of_head():
        return [runner.compile(request) for runner, request in runs]


def make_runner(spec: ImplSpec, profile: str, context: ImplContext) -> PythonPortRunner:
    """`--impl python`: the port in process under `profile` (a profile name)."""
    return PythonPortRunner(profile, context.git_env)
