"""The Runner interface every implementation shares: one generic `ask` for any op of the protocol's table
(harness.core.protocol.OPS), and the request records' shortcuts (`compile`, the lifecycle probe's three ops)."""

from __future__ import annotations

import abc
from typing import Any

from harness.core import protocol
from harness.core.model import CompileRequest, LifecycleOpen, Outcome


class Runner(abc.ABC):
    """An implementation of the compiler. Started once per run; serves every case."""

    #: short stable name used in reports, e.g. `python@letta-code@0.32.18` or `letta-code@0.32.18`
    name: str
    #: the lifecycle session open on this runner (numbered from 1; its name on the wire is `session_name`)
    session = 0

    def start(self) -> None:  # noqa: B027 - optional hook
        """Acquire what the runner needs (download, process start). Errors surface per case."""

    def ask(self, request: dict[str, Any]) -> Outcome:
        """The outcome of one request of the protocol (built by `protocol.request` or a record's `to_wire`),
        decoded by `protocol.decode`. A runner that speaks no protocol cannot run it: an error, never a pass."""
        if protocol.op_of(request).lifecycle:
            return Outcome("error", error=f"{self.name} cannot run lifecycle probes")
        return Outcome("error", error=f"{self.name} cannot run {request['op']} requests")

    def compile(self, request: CompileRequest) -> Outcome:
        return self.ask(request.to_wire())

    def prefetch(self, requests: list[CompileRequest]) -> None:  # noqa: B027 - optional hook
        """A hint that `compile` will be called with each of these soon: a runner that can work on them in the
        background (a process answering in order) starts now. The answers are the same either way."""

    # Lifecycle probes (one open session per runner at a time). A runner without them makes
    # lifecycle cases errors, never passes. Records follow reference/driver.mjs's lifecycle ops.
    @property
    def session_name(self) -> str:
        return f"s{self.session}"

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        self.session += 1
        return self.ask(request.to_wire(self.session_name))

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        return self.ask(protocol.request("lifecycle_step", session=self.session_name, step=step))

    def lifecycle_close(self) -> None:
        """End the open probe session."""
        self.ask(protocol.request("lifecycle_close", session=self.session_name))

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
