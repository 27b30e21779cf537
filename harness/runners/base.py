"""The Runner interface every implementation shares (the requests and outcomes it speaks are in harness.core.model)."""

from __future__ import annotations

import abc
from typing import Any

from harness.core.model import CompileRequest, LifecycleOpen, Outcome


class Runner(abc.ABC):
    """An implementation of the compiler. Started once per run; serves every case."""

    #: short stable name used in reports, e.g. `python@letta-code@0.32.18` or `letta-code@0.32.18`
    name: str

    def start(self) -> None:  # noqa: B027 - optional hook
        """Acquire what the runner needs (download, process start). Errors surface per case."""

    @abc.abstractmethod
    def compile(self, request: CompileRequest) -> Outcome: ...

    def prefetch(self, requests: list[CompileRequest]) -> None:  # noqa: B027 - optional hook
        """A hint that `compile` will be called with each of these soon: a runner that can work on them in the
        background (a process answering in order) starts now. The answers are the same either way."""

    # Lifecycle probes (one open session per runner at a time). A runner without them makes
    # lifecycle cases errors, never passes. Records follow reference/driver.mjs's lifecycle ops.
    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        return Outcome("error", error=f"{self.name} cannot run lifecycle probes")

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        return Outcome("error", error=f"{self.name} cannot run lifecycle probes")

    def lifecycle_close(self) -> None:  # noqa: B027 - optional hook
        """End the open probe session."""

    def features(self) -> frozenset[str] | None:
        """The layout features (feature rules of cases/rules.yaml) this implementation declares it implements,
        from `hello`'s `capabilities.features` (docs/protocol.md); None: it declares none, so all of them."""
        return None

    def describe(self) -> dict[str, Any]:
        """Versions and environment, recorded in reports."""
        return {"name": self.name}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release processes and temporary files."""

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
