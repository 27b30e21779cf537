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


@dataclass(frozen=True)
class LifecycleOpen:
    """Start a conversation probe: an agent over `memory_dir`, its first conversation compiled and cached.

    `agent_id` and `model` are None for the runner that opens first (the reference), whose store
    chooses them; the harness passes what it chose to the others, since ids are inputs of the compiler.
    """

    memory_dir: Path
    storage_dir: Path
    system: str
    now: str
    model: str | None = None
    agent_id: str | None = None
    delivery: str = "mid-conversation"

    def to_wire(self, session: str) -> dict[str, Any]:
        return {
            "op": "lifecycle_open",
            "session": session,
            "memoryDir": str(self.memory_dir),
            "storageDir": str(self.storage_dir),
            "system": self.system,
            "model": self.model,
            "now": self.now,
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

    # Lifecycle probes (one open session per runner at a time). A runner without them makes
    # lifecycle cases errors, never passes. Records follow reference/driver.mjs's lifecycle ops.
    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        return Outcome("error", error=f"{self.name} cannot run lifecycle probes")

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        return Outcome("error", error=f"{self.name} cannot run lifecycle probes")

    def lifecycle_close(self) -> None:  # noqa: B027 - optional hook
        """End the open probe session."""

    def describe(self) -> dict[str, Any]:
        """Versions and environment, recorded in reports."""
        return {"name": self.name}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release processes and temporary files."""

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
