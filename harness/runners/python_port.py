"""The Python port (memfs_prompt), run in process."""

from __future__ import annotations

import time
from typing import Any

from memfs_prompt import compile_system_prompt
from memfs_prompt.cli import parse_now
from memfs_prompt.profiles import Profile
from memfs_prompt.render_v1 import UpstreamError

from .base import CompileRequest, Outcome, Runner


class PythonPortRunner(Runner):
    def __init__(self, profile: Profile, git_env: dict[str, str] | None = None) -> None:
        self.profile = profile
        self.git_env = git_env
        self.name = f"python:{profile.name}"

    def compile(self, request: CompileRequest) -> Outcome:
        started = time.perf_counter()
        try:
            record = compile_system_prompt(
                request.memory_dir,
                system=request.system,
                agent_id=request.agent_id,
                conversation_id=request.conversation_id,
                now=parse_now(request.now),
                previous_message_count=request.previous_message_count,
                include_memfs=request.include_memfs,
                profile=self.profile,
                git_env=self.git_env,
            )
        except UpstreamError as error:
            return Outcome("thrown", thrown=str(error), elapsed_ms=_ms(started))
        except Exception as error:  # a port crash is an error of this case, not of the run
            return Outcome("error", error=f"{type(error).__name__}: {error}", elapsed_ms=_ms(started))
        return Outcome("ok", record=record.to_json(), elapsed_ms=_ms(started))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "implementation": "memfs_prompt (in process)", "profile": self.profile.name}


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
