"""A long-lived subprocess speaking JSON lines: requests and answers carry an id.

Lines are split on b"\\n" only: JSON text may hold U+2028, U+0085 and other characters
that str.splitlines() would break on. A crash, a hang past the timeout, garbage, a
partial line, an answer line over MAX_LINE_BYTES or an answer with the wrong id ends the
request as an error and the process is restarted for the next request; it never yields a record.
Output left over after an answer (a second answer, stray lines) restarts the process before
the next request, so one misbehaving case cannot make the next one fail.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from harness.model import CompileRequest, LifecycleOpen, Outcome
from harness.runners.base import Runner

MAX_LINE_BYTES = 256 * 1024 * 1024  # an answer line longer than this is garbage, not a record
_PARTIAL, _TOO_LONG = b"\0partial", b"\0too-long"


class ProtocolError(Exception):
    pass


class JsonLinesProcess:
    """Start, talk to and restart one JSON-lines child process."""

    def __init__(self, argv: list[str], env: dict[str, str] | None, cwd: Path | None = None) -> None:
        self.argv, self.env, self.cwd = argv, env, cwd
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=200)
        self._next_id = 0
        self.starts = 0
        self.stale_restarts = 0  # restarts because of output left over after an answer

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        self.stop()
        self._lines = queue.Queue()
        self._stderr.clear()
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,  # so a hung child and its git processes can be killed together
        )
        self.starts += 1
        threading.Thread(target=self._pump_stdout, args=(self._proc, self._lines), daemon=True).start()
        threading.Thread(target=self._pump_stderr, args=(self._proc,), daemon=True).start()

    def _pump_stdout(self, proc: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
        assert proc.stdout is not None
        pending = bytearray()
        for chunk in iter(lambda: proc.stdout.read1(1 << 16), b""):  # type: ignore[union-attr,attr-defined]
            pending += chunk
            if b"\n" in chunk:
                *complete, rest = bytes(pending).split(b"\n")
                for line in complete:
                    lines.put(line)
                pending = bytearray(rest)
            if len(pending) > MAX_LINE_BYTES:  # stop buffering; request() kills the process
                lines.put(_TOO_LONG)
                pending.clear()
                break
        if pending:
            lines.put(bytes(pending) + _PARTIAL)
        lines.put(None)

    def _pump_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        for raw in iter(proc.stderr.readline, b""):
            self._stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def request(self, payload: dict[str, Any], timeout: float, *, retry_stale: bool = True) -> dict[str, Any]:
        """Send one request and wait for its answer; raises ProtocolError (and leaves the process stopped).

        An answer to an earlier request (a second answer that arrived after this request was sent) is
        left-over output: the process is restarted and the request sent once more."""
        if self.running and not self._lines.empty():
            self.stop()  # output nobody asked for (a second answer, stray lines): start clean
            self.stale_restarts += 1
        if not self.running:
            self.start()
        assert self._proc is not None and self._proc.stdin is not None
        self._next_id += 1
        request_id = self._next_id
        line = json.dumps({"id": request_id, **payload}, ensure_ascii=True).encode("ascii") + b"\n"
        try:
            self._proc.stdin.write(line)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._fail("the process exited before reading the request") from None
        try:
            raw = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise self._fail(f"no answer within {timeout:g} s (killed)") from None
        if raw is None:
            raise self._fail(f"the process exited (code {self._wait_code()}) without answering")
        if raw == _TOO_LONG:
            raise self._fail(f"answer line longer than {MAX_LINE_BYTES} bytes (killed)")
        if raw.endswith(_PARTIAL):
            raise self._fail("the process exited in the middle of an answer line")
        try:
            answer = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise self._fail(f"answer is not JSON: {raw[:200]!r}") from None
        got = answer.get("id") if isinstance(answer, dict) else None
        if retry_stale and isinstance(got, int) and got < request_id:
            self.stop()
            self.stale_restarts += 1
            return self.request(payload, timeout, retry_stale=False)
        if not isinstance(answer, dict) or got != request_id:
            raise self._fail(f"answer id {got!r} does not match request id {request_id}")
        return answer

    def _wait_code(self) -> int | None:
        try:
            return self._proc.wait(timeout=5) if self._proc else None
        except subprocess.TimeoutExpired:
            return None

    def _fail(self, reason: str) -> ProtocolError:
        time.sleep(0.05)  # let the stderr pump catch the last lines
        self.stop()
        return ProtocolError(reason)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                if stream:
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


class JsonLinesRunner(Runner):
    """Any command that speaks the protocol in reference/driver.mjs (hello, compile)."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None, timeout: float = 60.0) -> None:
        self.name = name
        self.process = JsonLinesProcess(argv, env)
        self.timeout = timeout
        self.info: dict[str, Any] = {}
        self.start_error: str | None = None
        self._session = 0

    def start(self) -> None:
        try:
            answer = self.process.request({"op": "hello"}, timeout=max(self.timeout, 120.0))
            self.info = answer.get("info", {})
        except (ProtocolError, OSError) as error:
            self.start_error = f"{error}\n{self.process.stderr_tail()}".strip()

    def compile(self, request: CompileRequest) -> Outcome:
        """The answer's `record`; with `clientSkills` given, its `systemPromptWithSkills` joins the record."""
        return self._ask(request.to_wire(), "record", merge=("systemPromptWithSkills",))

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        self._session += 1
        return self._ask(request.to_wire(f"s{self._session}"), "opened", keep=("opened", "compiled"))

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        return self._ask({"op": "lifecycle_step", "session": f"s{self._session}", "step": step}, "observed")

    def lifecycle_close(self) -> None:
        if self.process.running and not self.start_error:
            with contextlib.suppress(ProtocolError, OSError):
                self.process.request({"op": "lifecycle_close", "session": f"s{self._session}"}, timeout=self.timeout)

    def _ask(
        self, payload: dict[str, Any], key: str, keep: tuple[str, ...] = (), merge: tuple[str, ...] = ()
    ) -> Outcome:
        """One request; the answer's `key` (or the `keep` keys) become the outcome's record, with the
        `merge` keys the answer has added to it."""
        if self.start_error:
            return Outcome("error", error=f"reference unavailable: {self.start_error}")
        started = time.perf_counter()
        try:
            answer = self.process.request(payload, timeout=self.timeout)
        except (ProtocolError, OSError) as error:
            return Outcome("error", error=str(error), stderr=self.process.stderr_tail(), elapsed_ms=_ms(started))
        elapsed = _ms(started)
        polluted = bool(answer.get("polluted"))
        notes = ["upstream code polluted a shared prototype; the process was restarted"] if polluted else []
        if polluted:
            self.process.stop()
        if not answer.get("ok"):
            return Outcome(
                "error", error=str(answer.get("error")), stderr=self.process.stderr_tail(), elapsed_ms=elapsed
            )
        if "thrown" in answer:
            return Outcome("thrown", thrown=answer["thrown"], polluted=polluted, elapsed_ms=elapsed, notes=notes)
        record = {k: answer.get(k) for k in keep} if keep else answer.get(key)
        if not isinstance(record, dict) or (keep and not isinstance(answer.get(key), dict)):
            return Outcome("error", error=f"answer has no {key}: {str(answer)[:200]}", elapsed_ms=elapsed)
        record = {**record, **{name: answer[name] for name in merge if name in answer}}
        return Outcome("ok", record=record, polluted=polluted, elapsed_ms=elapsed, notes=notes)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "argv": self.process.argv, "info": self.info, "starts": self.process.starts}

    def close(self) -> None:
        self.process.stop()


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
