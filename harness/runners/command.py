"""`--impl cmd:ARGV`: any program that speaks the protocol (docs/protocol.md), one process per worker.

The program runs warm, with the fault handling of every JSON-lines child (harness.runners.jsonl_process:
a crash, a hang, garbage, a wrong id or an exit mid-run is an error of that case, and the program is
started again for the next one). Its `hello` capabilities decide what it is asked: a profile it does
not claim, or lifecycle when it has none, is not applicable without a request; an `unsupported`
answer is not applicable too. Every compile and lifecycle_open carries the profile the case is
compared under (`CompileRequest.profile`), so one process serves every profile of a run.

The program is the one named and writes only its own directories: it starts in an empty directory of its own
(made for the runner, removed when it closes), never in the caller's, so nothing there shadows what the command
names (`python -m pkg` puts its working directory ahead of PYTHONPATH) and nothing it writes lands there. What
the command means is fixed in the caller's directory first (`resolved_argv`): the program is looked up on the
caller's PATH (or, given as a path, made absolute), an argument naming a file there, or a path with a `/` that
exists there, is made absolute, and so is each relative entry of the caller's PYTHONPATH. The environment is the
isolated one of every implementation: a private HOME, no git configuration, the pinned locale and clock zone,
the caller's PYTHONPATH, the variables `--impl-env` passes (ImplContext.env), and the program's directory first
on PATH. Every other variable is dropped, so a program that fails (crashes, exits, hangs, fails its hello) says
so in its error, with how to pass one (ENV_HINT).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from harness.core import protocol
from harness.core.model import CompileRequest, Outcome
from harness.repo.gitenv import isolated_env, recorded_env
from harness.runners.implementations import ImplContext, ImplSpec
from harness.runners.jsonl_process import JsonLinesRunner

PROTOCOL = 1  # the protocol version this harness speaks (docs/protocol.md)
ENV_HINT = (
    ' (the program runs in an isolated environment, docs/protocol.md "Environment": a private HOME, pinned '
    "locale and TZ, no variable of yours but PYTHONPATH; pass one with --impl-env NAME or --impl-env NAME=VALUE)"
)


class CommandRunner(JsonLinesRunner):
    """A protocol program as the implementation under test; each request names its profile."""

    fault_hint = ENV_HINT

    def __init__(self, spec: ImplSpec, context: ImplContext) -> None:
        caller = Path.cwd()
        argv = resolved_argv(spec.argv, caller)
        super().__init__(spec.label, argv, None, context.timeout)
        self.spec = spec
        self.context_env = context.env
        found = os.sep not in spec.argv[0] and argv[0] != spec.argv[0]  # looked up on PATH
        env = isolated_env(context.home, context.ceiling, extra_path=[str(Path(argv[0]).parent)] if found else [])
        if os.environ.get("PYTHONPATH"):  # a Python program run from a checkout finds its own packages
            env["PYTHONPATH"] = resolved_search_path(os.environ["PYTHONPATH"], caller)
        env.update(context.env)  # --impl-env (the names it may set are cli.impl_options.impl_env's)
        self.process.env = env
        self.workdir: Path | None = Path(tempfile.mkdtemp(prefix="conformance-impl-"))  # its own, empty (above)
        self.process.cwd = self.workdir

    def start(self) -> None:
        if self.process.starts:
            return
        if self.workdir is None:  # (a runner closed and started again)
            self.workdir = self.process.cwd = Path(tempfile.mkdtemp(prefix="conformance-impl-"))
        if not Path(self.process.argv[0]).exists() and os.sep in self.process.argv[0]:
            self.start_error = f"{self.spec.label}: no such program {self.process.argv[0]}"
            return
        super().start()
        spoken = self.hello.get("protocol", PROTOCOL)  # a program from before versioning speaks version 1
        if not self.start_error and spoken != PROTOCOL:
            self.start_error = f"{self.spec.label} speaks protocol {spoken!r}; this harness speaks {PROTOCOL}"
        declared = self.capabilities.get("features")
        if not self.start_error and declared is not None and not _names(declared):
            self.start_error = (
                f"{self.spec.label}'s hello: capabilities.features is {declared!r}, not a list of feature ids "
                "(memfs-v2, skills-block, ...; docs/protocol.md); leave it out to declare every feature"
            )

    @property
    def capabilities(self) -> dict[str, Any]:
        caps = self.hello.get("capabilities")
        return caps if isinstance(caps, dict) else {}

    def features(self) -> frozenset[str] | None:
        """`hello`'s `capabilities.features`: the feature rules it implements; absent, every one."""
        if not self.start_error and not self.process.starts:
            self.start()
        declared = self.capabilities.get("features")
        if self.start_error or not isinstance(declared, list):
            return None
        return frozenset(declared)

    def _unserved(self, profile: str | None, lifecycle: bool) -> Outcome | None:
        """Not applicable before asking: a profile the program does not claim, or lifecycle without it."""
        if not self.start_error and not self.process.starts:
            self.start()
        if self.start_error:
            return None  # an error of the case (JsonLinesRunner answers it)
        profiles = self.capabilities.get("profiles")
        if isinstance(profiles, list) and profile is not None and profile not in profiles:
            return Outcome("unsupported", error=f"{self.spec.label} does not claim profile {profile}")
        if lifecycle and self.capabilities.get("lifecycle") is False:
            return Outcome("unsupported", error=f"{self.spec.label} has no lifecycle ops")
        return None

    def compile(self, request: CompileRequest) -> Outcome:
        return self._unserved(request.profile, lifecycle=False) or super().compile(request)

    def ask(self, request: dict[str, Any]) -> Outcome:
        return self._unserved(request.get("profile"), protocol.op_of(request).lifecycle) or super().ask(request)

    def close(self) -> None:
        super().close()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None  # what the program wrote in its own directory

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update({"implementation": self.spec.label, "cwd": "(a directory of its own)"})
        if self.process.env:
            info["env"] = recorded_env(self.process.env)
            if self.context_env:
                info["passed_env"] = sorted(self.context_env)  # names only: a value may be a secret
        if self.start_error:
            info["start_error"] = self.start_error
        return info


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def make_runner(spec: ImplSpec, profile: str, context: ImplContext) -> CommandRunner:
    return CommandRunner(spec, context)


def resolved_argv(argv: list[str], caller: Path) -> list[str]:
    """The command as it reads in the caller's directory, for a program that runs in another: the program looked
    up on the caller's PATH (or, a path, made absolute), and each argument that names a file in `caller`
    (`port.py`), or holds a `/` and names anything there (`./build/`, `reference/driver.mjs`), made absolute.
    Anything else (`serve`, `-m my_port`, `NAME=VALUE`, a path that does not exist) is passed as written."""
    program = argv[0]
    found = shutil.which(program) if os.sep not in program else None
    head = os.path.abspath(found) if found else str(caller / program) if os.sep in program else program
    return [head, *(_resolved(arg, caller) for arg in argv[1:])]


def _resolved(arg: str, caller: Path) -> str:
    if not arg or arg.startswith("-") or os.path.isabs(arg):
        return arg
    here = caller / arg
    try:
        named = here.is_file() or (os.sep in arg and here.exists())
    except OSError:  # a name too long, an unreadable directory: not a path of the caller's
        return arg
    return os.path.normpath(here) if named else arg


def resolved_search_path(value: str, caller: Path) -> str:
    """PYTHONPATH with each relative entry made absolute against the caller's directory (empty entries dropped:
    they would name the program's own directory, not the caller's)."""
    return os.pathsep.join(os.path.normpath(caller / entry) for entry in value.split(os.pathsep) if entry)
