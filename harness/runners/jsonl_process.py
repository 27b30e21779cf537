"""A long-lived subprocess speaking JSON lines: requests and answers carry an id.

Lines are split on b"\\n" only: JSON text may hold U+2028, U+0085 and other characters
that str.splitlines() would break on. A crash, a hang past the timeout, garbage, a
partial line, an answer line over MAX_LINE_BYTES or an answer with the wrong id ends the
request as an error and the process is restarted for the next request; it never yields a record.
Output left over after an answer (a second answer, stray lines) restarts the process before
the next request, so one misbehaving case cannot make the next one fail. A request is written by
harness.runners.wire.encode_request; one it refuses (NaN, Infinity) is never sent and is the harness's error.
"""

from __future__ import annotations

import collections
import contextlib
import json
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from harness.core import protocol
from harness.core.child import Child, kill_child, start_group
from harness.core.model import CompileRequest, Outcome
from harness.runners.base import Runner
from harness.runners.wire import UnreadableRequest, check_request, encode_request, unreadable_outcome

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
        # keep_spare: after the first restart, keep one more process started (loading) beside the one in use,
        # so the next restart (a polluted answer the driver cannot restore ends it) does not wait for a start-up
        self.keep_spare = False
        self._spare: Child | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        self.stop()
        spare, self._spare = self._spare, None
        if spare is not None and (spare.proc.poll() is not None or spare.launch != (self.argv, self.env, self.cwd)):
            kill_child(spare.proc)
            spare = None
        child = spare or self._spawn()
        self._proc, self._lines, self._stderr = child.proc, child.lines, child.stderr
        self.starts += 1
        if self.keep_spare and self.starts > 1:
            self._spare = self._spawn()

    def _spawn(self) -> Child:
        proc = start_group(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, cwd=self.cwd
        )
        child = Child(proc, queue.Queue(), collections.deque(maxlen=200), (self.argv, self.env, self.cwd))
        threading.Thread(target=self._pump_stdout, args=(proc, child.lines), daemon=True).start()
        threading.Thread(target=self._pump_stderr, args=(proc, child.stderr), daemon=True).start()
        return child

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

    def _pump_stderr(self, proc: subprocess.Popen[bytes], stderr: collections.deque[str]) -> None:
        assert proc.stderr is not None
        for raw in iter(proc.stderr.readline, b""):
            stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def request(self, payload: dict[str, Any], timeout: float, *, retry_stale: bool = True) -> dict[str, Any]:
        """Send one request and wait for its answer; raises ProtocolError (and leaves the process stopped).

        An answer to an earlier request (a second answer that arrived after this request was sent) is
        left-over output: the process is restarted and the request sent once more. A request no JSON parser
        can read raises UnreadableRequest before anything is sent (the process is left as it is)."""
        line = encode_request({"id": self._next_id + 1, **payload}) + b"\n"
        if self.running and not self._lines.empty():
            self.stop()  # output nobody asked for (a second answer, stray lines): start clean
            self.stale_restarts += 1
        if not self.running:
            self.start()
        assert self._proc is not None and self._proc.stdin is not None
        self._next_id += 1
        request_id = self._next_id
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

    def request_many(
        self, payloads: list[dict[str, Any]], timeout: float
    ) -> Iterator[dict[str, Any] | Exception | None]:
        """Send every request before reading an answer (the driver answers in order); yield one item per request.

        An item is the answer, a ProtocolError (that request failed: the process is stopped), or None: the
        request was not answered because the process ended first (an unrestored polluted answer, a crash):
        send those again one at a time with `request`. `timeout` is per answer. The generator touches the
        process until it is exhausted, and the process is left clean (or stopped) after it.
        Every payload must be one `encode_request` accepts (UnreadableRequest otherwise, before anything is sent).
        """
        data = b"".join(encode_request({"id": self._next_id + 1 + i, **p}) + b"\n" for i, p in enumerate(payloads))
        if self.running and not self._lines.empty():
            self.stop()
            self.stale_restarts += 1
        if not self.running:
            self.start()
        assert self._proc is not None and self._proc.stdin is not None
        first = self._next_id + 1
        self._next_id += len(payloads)
        stdin = self._proc.stdin

        def write() -> None:
            with contextlib.suppress(BrokenPipeError, OSError, ValueError):
                stdin.write(data)
                stdin.flush()

        threading.Thread(target=write, daemon=True).start()  # a long batch must not block on a full pipe
        for index in range(len(payloads)):
            try:
                raw = self._lines.get(timeout=timeout)
            except queue.Empty:
                yield self._fail(f"no answer within {timeout:g} s (killed)")
                yield from [None] * (len(payloads) - index - 1)
                return
            answer = _parse_answer(raw, first + index)
            if answer is None:  # the process ended before answering: the rest go again one by one
                self.stop()
                yield from [None] * (len(payloads) - index)
                return
            if isinstance(answer, str):
                yield self._fail(answer)
                yield from [None] * (len(payloads) - index - 1)
                return
            if protocol.ends_process(answer):  # the driver exits after this answer
                self.stop()
                yield answer
                yield from [None] * (len(payloads) - index - 1)
                return
            yield answer

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
        """Stop the process in use (a spare, if any, stays: `close` ends it too)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            kill_child(proc)

    def close(self) -> None:
        """Stop the process in use and the spare."""
        self.stop()
        spare, self._spare = self._spare, None
        if spare is not None:
            kill_child(spare.proc)


class JsonLinesRunner(Runner):
    """Any command that speaks the protocol in reference/driver.mjs (hello, compile)."""

    fault_hint = ""  # appended to the error of a process that crashed, exited, hung or failed its hello

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None, timeout: float = 60.0) -> None:
        self.name = name
        self.process = JsonLinesProcess(argv, env)
        self.timeout = timeout
        self.info: dict[str, Any] = {}
        self.hello: dict[str, Any] = {}  # the whole `hello` answer (protocol version, capabilities)
        self.start_error: str | None = None
        self._prefetched: dict[str, Future[tuple[dict[str, Any] | Exception | None, float]]] = {}
        self._collector: threading.Thread | None = None

    def start(self) -> None:
        try:
            answer = self.process.request(protocol.request("hello"), timeout=max(self.timeout, 120.0))
            self.hello, self.info = answer, answer.get("info", {})
        except (ProtocolError, OSError) as error:
            self.start_error = f"{error}{self.fault_hint}\n{self.process.stderr_tail()}".strip()

    def compile(self, request: CompileRequest) -> Outcome:
        """The answer's `record`; with `clientSkills` given, its `systemPromptWithSkills` joins the record.

        A request given to `prefetch` before takes its answer from there (waiting for it if need be)."""
        payload = request.to_wire()
        pending = self._prefetched.pop(_wire_key(payload), None)
        if pending is not None:
            answer, elapsed = pending.result()
            if answer is not None:  # else: unanswered (the process ended first), asked again below
                return self._outcome(payload, answer, elapsed, batch=True)
        return self.ask(payload)

    def prefetch(self, requests: list[CompileRequest]) -> None:
        """Send these compile requests now, all at once, and collect the answers in the background; `compile`
        of each then returns its answer. The driver answers in order, so the reference works on the batch
        while the caller does something else (the Python port's compiles). One batch at a time."""
        if self.start_error or not requests:
            return
        self.wait_prefetched()
        self.process.keep_spare = True  # a batch user compiles many repositories: restarts must not wait
        payloads = [p for p in (r.to_wire() for r in requests) if check_request(p) is None]
        if not payloads:  # (a request no parser can read is left to `compile`, which answers it as the harness's)
            return
        futures: list[Future[tuple[dict[str, Any] | Exception | None, float]]] = [Future() for _ in payloads]
        self._prefetched = {_wire_key(p): f for p, f in zip(payloads, futures, strict=True)}

        def collect() -> None:
            answers = self.process.request_many(payloads, self.timeout)
            last = time.perf_counter()
            unanswered = []
            for future, answer in zip(futures, answers, strict=True):
                if answer is None:
                    unanswered.append(future)  # resolved once this thread is done with the process
                    continue
                future.set_result((answer, _ms(last)))
                last = time.perf_counter()
            for future in unanswered:
                future.set_result((None, 0.0))

        self._collector = threading.Thread(target=collect, daemon=True)
        self._collector.start()

    def wait_prefetched(self) -> None:
        """Wait until the batch sent by `prefetch` is answered (or abandoned); its answers stay available."""
        if self._collector is not None:
            self._collector.join()
            self._collector = None

    def lifecycle_close(self) -> None:
        if self.process.running and not self.start_error:
            super().lifecycle_close()

    def ask(self, request: dict[str, Any]) -> Outcome:
        """One request; its answer decoded by harness.core.protocol.decode."""
        if self.start_error:
            return Outcome("error", error=f"{self.name} unavailable: {self.start_error}")
        self.wait_prefetched()  # the process serves one conversation at a time
        started = time.perf_counter()
        try:
            answer = self.process.request(request, timeout=self.timeout)
        except UnreadableRequest as error:
            return unreadable_outcome(error)
        except (ProtocolError, OSError) as error:
            return self._outcome(request, error, _ms(started))
        return self._outcome(request, answer, _ms(started))

    def _outcome(
        self, request: dict[str, Any], answer: dict[str, Any] | Exception, elapsed: float, *, batch: bool = False
    ) -> Outcome:
        """An answer (or the error that ended its request) as an outcome; `batch`: it came from `prefetch`."""
        if isinstance(answer, Exception):
            return Outcome(
                "error", error=f"{answer}{self.fault_hint}", stderr=self.process.stderr_tail(), elapsed_ms=elapsed
            )
        if protocol.ends_process(answer) and not batch:
            self.process.stop()  # (a batch stops it itself, right after this answer)
        stderr = "" if answer.get("ok") else self.process.stderr_tail()
        return protocol.decode(protocol.op_of(request), answer, elapsed, stderr)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "argv": self.process.argv, "info": self.info, "starts": self.process.starts}

    def close(self) -> None:
        self.wait_prefetched()
        self._prefetched.clear()
        self.process.close()


def _parse_answer(raw: bytes | None, request_id: int) -> dict[str, Any] | str | None:
    """One answer line of a batch: the answer, a reason it is no answer (str), or None when the process ended."""
    if raw is None or raw.endswith(_PARTIAL):
        return None
    if raw == _TOO_LONG:
        return f"answer line longer than {MAX_LINE_BYTES} bytes (killed)"
    try:
        answer = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return f"answer is not JSON: {raw[:200]!r}"
    got = answer.get("id") if isinstance(answer, dict) else None
    if got != request_id:
        return f"answer id {got!r} does not match request id {request_id}"
    return answer  # type: ignore[no-any-return]


def _wire_key(payload: dict[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, ensure_ascii=True)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
