"""Implementations under test: what `--impl` names, and which runner module serves each kind.

An implementation under test is compared with the references, case by case. `python` is the port in
process (the default), `python-cli` its command line, `cmd:ARGV` any program that speaks the protocol
(docs/protocol.md), `letta-server:VERSION` the Letta server's renderer, compared on the product view.

Each kind is served by one runner module with a `make_runner(spec, profile, context)` function,
imported only when a run asks for that kind, so the harness core never imports the code under
test: adding an implementation is one new module and one line of `RUNNER_MODULES`.
"""

from __future__ import annotations

import importlib
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from harness.core.model import DEFAULT_IMPLEMENTATION
from harness.runners.base import Runner

SERVER = "letta-server"
IMPL_FORMS = "python, python-cli, cmd:ARGV (shell-split) or letta-server:VERSION"

#: kind -> the runner module whose make_runner serves it
RUNNER_MODULES = {
    "python": "harness.runners.python_port",
    "python-cli": "harness.runners.python_cli",
    "cmd": "harness.runners.command",
    SERVER: "harness.runners.letta_server",
}


@dataclass(frozen=True)
class ImplSpec:
    """What `--impl` names. `label` is how reports, expectations and reproduce commands name it."""

    kind: str
    value: str = ""

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.value}" if self.value else self.kind

    @property
    def product(self) -> str:
        """`letta-server` for the other product (compared on the product view), else `letta-code`."""
        return SERVER if self.kind == SERVER else "letta-code"

    @property
    def argv(self) -> list[str]:
        """A `cmd:` implementation's command line."""
        return shlex.split(self.value)

    @property
    def per_profile(self) -> bool:
        """Whether a run needs one runner per profile: the port is built for one; a protocol program reads the
        profile from each request, and the Letta server has none."""
        return self.kind in ("python", "python-cli")

    @property
    def in_process(self) -> bool:
        """The port run inside the harness's own interpreter (`python`)."""
        return self.kind == "python"

    @classmethod
    def parse(cls, text: str) -> ImplSpec:
        kind, sep, value = text.partition(":")
        if not sep and text.startswith(f"{SERVER}@"):  # as its runner is named: letta-server@0.16.8
            kind, sep, value = SERVER, ":", text.removeprefix(f"{SERVER}@")
        if kind in ("python", "python-cli") and not sep:
            return cls(kind)
        if kind == "cmd" and sep:
            try:
                argv = shlex.split(value)
            except ValueError as error:
                raise ValueError(f"--impl {text!r}: the command does not split as a shell line: {error}") from None
            if not argv:
                raise ValueError(f"--impl {text!r}: cmd: needs a command, e.g. cmd:'python -m memfs_prompt serve'")
            return cls(kind, value.strip())
        if kind == SERVER and sep and value:
            return cls(kind, value)
        raise ValueError(f"--impl {text!r}: use {IMPL_FORMS}")


DEFAULT = ImplSpec.parse(DEFAULT_IMPLEMENTATION)


@dataclass(frozen=True)
class ImplContext:
    """What every implementation's runner is started with: the isolated git environment, the private home
    and ceiling of the run, the per-request timeout, and the variables passed to a protocol program on top
    of its isolated environment (`--impl-env`, harness.runners.command)."""

    git_env: dict[str, str]
    home: Path
    ceiling: Path | None
    timeout: float
    env: dict[str, str] = field(default_factory=dict)


class RunnerMaker(Protocol):
    def __call__(self, spec: ImplSpec, profile: str, context: ImplContext) -> Runner: ...


def make_runner(spec: ImplSpec, profile: str, context: ImplContext) -> Runner:
    """The runner of `spec` compared under profile `profile` (a profile name, letta_profiles)."""
    module = importlib.import_module(RUNNER_MODULES[spec.kind])
    maker: RunnerMaker = module.make_runner
    return maker(spec, profile, context)


def hello_name(spec: ImplSpec, profile: str, context: ImplContext) -> str | None:
    """The name `spec` gives itself in `hello` (`info.implementation`, docs/protocol.md), or None: what an
    expectations file's `name:` is matched to, wherever the program lives. Starts the program once and stops it."""
    runner = make_runner(spec, profile, context)
    try:
        runner.start()
        info = runner.describe().get("info")
        name = info.get("implementation") if isinstance(info, dict) else None
        return name if isinstance(name, str) else None
    finally:
        runner.close()
