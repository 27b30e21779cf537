"""The Python port (memfs_prompt), run in process: a thin client of `memfs_prompt.protocol.Server`.

Each request goes to the server as the dict `python -m memfs_prompt serve` would parse from its line,
so the in-process port and the served port answer through one code path (docs/protocol.md). Answers
become outcomes as a JSON-lines runner reads them: `record` (with `systemPromptWithSkills` merged in),
`thrown`, or an error (`error`, or `unsupported` for an input the port does not serve). A request no line
could carry (harness.runners.wire) is not given to the port: its outcome is the harness's error.
"""

from __future__ import annotations

import time
from typing import Any

from harness.core.model import CompileRequest, LifecycleOpen, Outcome
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
        self._session = 0

    def compile(self, request: CompileRequest) -> Outcome:
        return self._ask(request.to_wire(), "record", merge=("systemPromptWithSkills",))

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        self._session += 1
        return self._ask(request.to_wire(self._session_name), "opened", keep=("opened", "compiled"))

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        return self._ask({"op": "lifecycle_step", "session": self._session_name, "step": step}, "observed")

    def lifecycle_close(self) -> None:
        self._server.handle({"op": "lifecycle_close", "session": self._session_name})

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "implementation": "memfs_prompt (in process)", "profile": self.profile.name,
                "collation": collation_info()}  # fmt: skip

    @property
    def _session_name(self) -> str:
        return f"s{self._session}"

    def _ask(
        self, request: dict[str, Any], key: str, keep: tuple[str, ...] = (), merge: tuple[str, ...] = ()
    ) -> Outcome:
        """One request; the answer's `key` (or the `keep` keys) become the record, with the `merge` keys added."""
        refused = check_request(request)  # what no line could carry is not given to the port either
        if refused is not None:
            return refused
        started = time.perf_counter()
        answer = self._server.handle(request)
        elapsed = (time.perf_counter() - started) * 1000
        if not answer["ok"] and "unsupported" in answer:
            return Outcome("unsupported", error=str(answer["unsupported"]), elapsed_ms=elapsed)
        if not answer["ok"]:
            return Outcome("error", error=str(answer.get("error")), elapsed_ms=elapsed)
        if "thrown" in answer:
            return Outcome("thrown", thrown=answer["thrown"], elapsed_ms=elapsed)
        record = {k: answer.get(k) for k in keep} if keep else dict(answer[key])
        record.update((name, answer[name]) for name in merge if name in answer)
        return Outcome("ok", record=record, elapsed_ms=elapsed)


def compile_each(runs: list[tuple[PythonPortRunner, CompileRequest]]) -> list[Outcome]:
    """Each request compiled by its runner, every repository's HEAD read once (memfs_prompt.compiler
    .one_reading_of_head): for a caller that knows nothing changes the repositories meanwhile (harness.runners
    .port_pool, a case's compiles under each profile)."""
    with one_reading_of_head():
        return [runner.compile(request) for runner, request in runs]


def make_runner(spec: ImplSpec, profile: str, context: ImplContext) -> PythonPortRunner:
    """`--impl python`: the port in process under `profile` (a profile name)."""
    return PythonPortRunner(profile, context.git_env)
