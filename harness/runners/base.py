"""The runner interface every implementation shares, and the request/outcome it speaks."""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal


@dataclass(frozen=True)
class CompileRequest:
    """One compile: the protocol's `compile` op, with upstream's option names on the wire."""

    memory_dir: Path
    system: str
    agent_id: str
    conversation_id: str
    now: str
    previous_message_count: int = 0
    include_memfs: bool = True

    def to_wire(self) -> dict[str, Any]:
        return {
            "op": "compile",
            "memoryDir": str(self.memory_dir),
            "system": self.system,
            "agentId": self.agent_id,
            "conversationId": self.conversation_id,
            "now": self.now,
            "previousMessageCount": self.previous_message_count,
            "includeMemfs": self.include_memfs,
        }


Status = Literal["ok", "thrown", "error"]


@dataclass
class Outcome:
    """What an implementation produced: a record, an exception upstream threw, or a failure to run."""

    status: Status
    record: dict[str, Any] | None = None
    thrown: str | None = None
    error: str | None = None  # could not run: crash, hang, garbage; never comparable
    stderr: str = ""
    polluted: bool = False
    elapsed_ms: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, "", [], False) or k == "status"}


class Runner(abc.ABC):
    """An implementation of the compiler. Started once per run; serves every case."""

    #: short stable name used in reports, e.g. `python@letta-code@0.32.18` or `letta-code@0.32.18`
    name: str

    def start(self) -> None:  # noqa: B027 - optional hook
        """Acquire what the runner needs (download, process start). Errors surface per case."""

    @abc.abstractmethod
    def compile(self, request: CompileRequest) -> Outcome: ...

    def describe(self) -> dict[str, Any]:
        """Versions and environment, recorded in reports."""
        return {"name": self.name}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release processes and temporary files."""

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
