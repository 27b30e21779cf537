"""The bridge between upstream's tests (the shim, reference/upstream-tests/shim.ts) and the implementation
under test: two FIFOs and one implementation process for the whole run.

The shim's calls are synchronous, as upstream's functions are: it writes one JSON line to the request FIFO
and blocks reading the answer FIFO. A thread here reads each request, adds the revision's profile, sends
it to the implementation (a protocol program, docs/protocol.md, with the fault handling of every JSON-lines
child: harness.runners.jsonl_process) and writes its answer back. One bun process is connected at a time
(test files run one after the other); when it exits, the bridge waits for the next. The implementation is
started (and asked `hello`) before the first test file runs, so no test pays for its start-up.

What `--impl` may name here: `python` (this project's port over the protocol,
`python -m memfs_prompt serve`, the same Server the in-process runner calls) or `cmd:ARGV`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shlex
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from harness.core.protocol import ends_process
from harness.runners.command import CommandRunner
from harness.runners.implementations import ImplContext, ImplSpec
from harness.runners.jsonl_process import ProtocolError
from harness.runners.wire import UnreadableRequest

PORT_COMMAND = [sys.executable, "-m", "memfs_prompt", "serve"]


class BridgeError(Exception):
    """An implementation `upstream-tests` cannot run (a usage error)."""


def protocol_spec(spec: ImplSpec) -> ImplSpec:
    """The protocol program serving `spec`: the port's serve loop for `python`, the command for `cmd:`."""
    if spec.kind == "python":
        return ImplSpec("cmd", shlex.join(PORT_COMMAND))
    if spec.kind == "cmd":
        return spec
    raise BridgeError(
        f"--impl {spec.label}: upstream-tests runs python or cmd:ARGV (a protocol program); "
        + (
            "python-cli is the port's command line, not a protocol program: use python"
            if spec.kind == "python-cli"
            else "the Letta server is another product, not what upstream's tests test"
        )
    )


class Bridge:
    """FIFOs `requests` and `answers` under a private directory, served by one implementation process."""

    def __init__(self, spec: ImplSpec, profile: str, context: ImplContext) -> None:
        self.spec, self.profile = spec, profile
        self.runner = CommandRunner(protocol_spec(spec), context)
        if spec.kind == "python":  # the port this process would import, as the in-process runner does
            found = importlib.util.find_spec("memfs_prompt")
            if found is not None and found.origin:
                env = self.runner.process.env or {}
                parts = [str(Path(found.origin).parents[1]), *filter(None, [env.get("PYTHONPATH")])]
                env["PYTHONPATH"] = os.pathsep.join(parts)
        self.timeout = context.timeout
        self.directory = Path(tempfile.mkdtemp(prefix="conformance-bridge-"))
        self.requests, self.answers = self.directory / "requests", self.directory / "answers"
        os.mkfifo(self.requests)
        os.mkfifo(self.answers)
        self.start_error: str | None = None
        self.served = 0
        self._stopping = False
        self._thread: threading.Thread | None = None

    def env(self) -> dict[str, str]:
        """What the shim reads to find the bridge."""
        return {
            "CONFORMANCE_UPSTREAM_REQUESTS": str(self.requests),
            "CONFORMANCE_UPSTREAM_ANSWERS": str(self.answers),
            "CONFORMANCE_UPSTREAM_PROFILE": self.profile,
        }

    def hook_config(self) -> Path:
        """The configuration hook_client.py reads (the pre-commit-hook target's hook, run by git outside this
        process): the same command and environment as the bridge's process, the profile and the timeout."""
        path = self.directory / "hook.json"
        config = {
            "label": self.spec.label,
            "argv": self.runner.process.argv,
            "env": self.runner.process.env or {},
            "profile": self.profile,
            "timeout": self.timeout,
        }
        path.write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
        return path

    def start(self) -> None:
        self.runner.start()
        self.start_error = self.runner.start_error
        self._thread = threading.Thread(target=self._serve, name="upstream-tests-bridge", daemon=True)
        self._thread.start()

    @property
    def hello(self) -> dict[str, Any]:
        return self.runner.hello

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The implementation's answer to one shim request (an error answer when it could not give one)."""
        if self.start_error:
            return {"ok": False, "error": f"{self.spec.label} did not start: {self.start_error}"}
        caps = self.runner.capabilities
        profiles = caps.get("profiles")
        if isinstance(profiles, list) and self.profile not in profiles:
            return {"ok": False, "unsupported": f"profile {self.profile!r} ({self.spec.label} does not claim it)"}
        payload = {key: value for key, value in request.items() if key != "id"}
        payload.setdefault("profile", self.profile)
        process = self.runner.process
        try:
            if not process.running:
                process.start()
                process.request({"op": "hello"}, self.timeout)
            answer = process.request(payload, self.timeout)
        except UnreadableRequest as error:
            return {"ok": False, "error": f"the harness cannot send this request: {error}"}
        except ProtocolError as error:
            tail = process.stderr_tail().strip().splitlines()[-5:]
            return {
                "ok": False,
                "error": f"{self.spec.label}: {error}" + (f"; stderr: {' | '.join(tail)}" if tail else ""),
            }
        if ends_process(answer):  # the program exits after such an answer; the next request starts a new one
            process.stop()
        answer.pop("id", None)
        self.served += 1
        return answer

    def _serve(self) -> None:
        while not self._stopping:
            with open(self.requests, "rb") as requests:  # blocks until a bun process (or stop()) opens it
                if self._stopping:
                    return
                with open(self.answers, "wb") as answers:
                    for line in requests:
                        if not line.strip():
                            continue
                        try:
                            request = json.loads(line)
                            answer = self.answer(request) if isinstance(request, dict) else {"ok": False, "error": "?"}
                        except ValueError as error:
                            answer = {"ok": False, "error": f"the shim sent a line that is not JSON: {error}"}
                        try:
                            answers.write(json.dumps(answer, ensure_ascii=True).encode() + b"\n")
                            answers.flush()
                        except (BrokenPipeError, OSError):
                            break  # the bun process went away mid-test

    def close(self) -> None:
        self._stopping = True
        if self._thread is not None and self._thread.is_alive():
            with contextlib.suppress(OSError):  # unblock the thread waiting for a bun process to open the FIFO
                fd = os.open(self.requests, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
            self._thread.join(timeout=5)
        self.runner.close()
        for path in (self.requests, self.answers, self.directory / "hook.json"):
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.directory.rmdir()

    def describe(self) -> dict[str, Any]:
        info = self.hello.get("info") if isinstance(self.hello.get("info"), dict) else {}
        return {
            "implementation": self.spec.label,
            "argv": self.runner.process.argv,
            "info": info,
            "start_error": self.start_error,
            "served": self.served,
        }
