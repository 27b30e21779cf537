"""The runners behind the result store: MemoizedReference (a reference's compiles, and lifecycle requests
outside a probe) and ProbeReplay (one lifecycle probe as a unit)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from harness.acquire import manifest
from harness.core import stopping
from harness.core.model import CompileRequest, LifecycleOpen, Outcome, Scenario
from harness.repo.checkout import REPOSITORY_STEPS, Checkout
from harness.runners.base import Runner
from harness.runners.bun_reference import BunReferenceRunner
from harness.runners.result_store.key import (
    BUILDERS,
    REFERENCE_RUNNERS,
    files_digest,
    reference_identity,
    repository_digest,
    repository_root,
    sha256_hex,
)
from harness.runners.result_store.store import ResultStore, canonical
from harness.runners.wire import UnreadableRequest, encode_request

STORABLE = ("ok", "thrown")  # an outcome of any other status is never stored
WORK = "@@letta-conformance-work@@"  # a lifecycle probe's temporary directory, in stored probes


def encode_outcome(outcome: Outcome) -> dict[str, Any]:
    """What is stored of an outcome: every field but the time it took and the store's own mark."""
    data = asdict(outcome)
    data.pop("elapsed_ms", None)
    data.pop("cache_key", None)
    return data


def decode_outcome(data: dict[str, Any], key: str, started: float) -> Outcome:
    return Outcome(**data, cache_key=key, elapsed_ms=(time.perf_counter() - started) * 1000)


def storable(outcome: Outcome) -> bool:
    """A record or an exception upstream threw; never an error, a crash, a timeout, `unsupported` or a harness bug."""
    return outcome.status in STORABLE and not outcome.harness_bug and outcome.error is None


class MemoizedReference(Runner):
    """A reference runner behind the store: the reference starts at the first request the store cannot
    answer (or when it must describe itself and the store has no description of it)."""

    def __init__(self, inner: BunReferenceRunner, store: ResultStore, repos: Path) -> None:
        self.inner, self.store, self.repos = inner, store, repos
        self.name = inner.name
        self._identity: str | None = None
        self._identified = False
        self._started = False
        # by the request object (never by equality: 7 == 7.0, two keys): its key, and what a prefetch read
        self._keys: dict[int, tuple[CompileRequest, str | None]] = {}
        self._held: dict[int, tuple[CompileRequest, Any]] = {}

    def identity(self) -> str | None:
        """The digest of reference_identity, or None: this reference is not memoized (its requests pass through)."""
        if not self._identified:
            self._identified = True
            try:
                found = reference_identity(self.inner)
            except Exception as error:  # an identity that cannot be made: run everything
                print(f"warning: {self.name}: not memoized ({type(error).__name__}: {error})", file=sys.stderr)
                found = None
            self._identity = sha256_hex(canonical(found)) if found is not None else None
        return self._identity

    def live(self) -> BunReferenceRunner:
        """The reference itself, started on first use."""
        if not self._started:
            stopping.check()  # a stopped run starts no reference
            self._started = True
            self.inner.start()
            self._remember_description()
        return self.inner

    def start(self) -> None:
        """Nothing yet: the reference starts when the store cannot answer (`live`)."""

    def compile_key(self, request: CompileRequest) -> str | None:
        """The store's key of this request to this reference, or None when it is not memoized."""
        identity = self.identity()
        root = repository_root(request.memory_dir, self.repos) if identity else None
        if identity is None or root is None:
            return None
        try:
            sent = encode_request(request.to_wire()).decode("ascii")
        except UnreadableRequest:
            return None  # the runner answers it as the harness's error
        try:
            repository = repository_digest(root, self.store)
        except OSError as error:  # a repository that cannot be read whole: not memoized (the reference says why)
            print(f"warning: {root}: not memoized ({error})", file=sys.stderr)
            return None
        return sha256_hex(
            canonical({"op": "compile", "reference": identity, "request": sent, "repository": repository})
        )

    def _key_of(self, request: CompileRequest) -> str | None:
        """`compile_key`, once per request object (a matrix sends each one to prefetch, then to compile)."""
        known = self._keys.get(id(request))
        if known is not None and known[0] is request:
            return known[1]
        if len(self._keys) > 4096:  # a long session (the fuzzer) sends requests once each
            self._keys.clear()
        key = self._keys.setdefault(id(request), (request, self.compile_key(request)))[1]
        return key

    def stored(self, request: CompileRequest) -> Outcome | None:
        """The stored outcome of this request, marked with its key, or None (a miss, or not memoized)."""
        started = time.perf_counter()
        key = self._key_of(request)
        held = self._held.pop(id(request), None)
        data = held[1] if held is not None and held[0] is request else self.store.get(key) if key else None
        if key is None or data is None:
            return None
        try:
            return decode_outcome(data, key, started)
        except TypeError:  # stored by another version of Outcome
            self.store.forget(key)
            return None

    def compile(self, request: CompileRequest) -> Outcome:
        found = self.stored(request)
        if found is not None:
            return found
        outcome = self.live().compile(request)
        key = self._key_of(request)
        if key and storable(outcome):
            self.store.put(key, "compile", self.name, encode_outcome(outcome))
        return outcome

    def prefetch(self, requests: list[CompileRequest]) -> None:
        """Read what the store holds for `requests` (compile takes it from here), and send the reference the rest."""
        self._held.clear()  # what an earlier batch read and nobody asked for
        missing = []
        for request in requests:
            key = self._key_of(request)
            data = self.store.get(key) if key else None
            if data is None:
                missing.append(request)
            else:
                self._held[id(request)] = (request, data)
        if missing:
            self.live().prefetch(missing)

    def ask(self, request: dict[str, Any]) -> Outcome:
        """Any other op: the live reference answers (only compiles and whole probes are stored)."""
        return self.live().ask(request)

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:  # a probe not wrapped by for_probe
        return self.live().lifecycle_open(request)

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        return self.live().lifecycle_step(step)

    def lifecycle_close(self) -> None:
        if self._started:
            self.inner.lifecycle_close()

    def _description_key(self) -> str | None:
        identity = self.identity()
        return sha256_hex(canonical([identity, str(manifest.DRIVER_PATH)])) if identity else None

    def _remember_description(self) -> None:
        key = self._description_key()
        described = self.inner.describe()
        if key and not described.get("start_error"):
            self.store.describe_as(key, {k: v for k, v in described.items() if k != "starts"})

    def describe(self) -> dict[str, Any]:
        """The reference's own description; when it never started, the one it gave when it last did (with
        `starts` 0), so that a report made from the store says what a cold one says."""
        key = self._description_key()
        if not self._started and key:
            found = self.store.description(key)
            if found is not None:
                return {**found, "starts": 0}
        if not self._started and stopping.requested():  # a stopped run starts nothing to describe it
            return {**self.inner.describe(), "starts": 0}
        if not self._started:
            self.live()
        return self.inner.describe()

    def close(self) -> None:
        if self._started:
            self._remember_description()  # as it ended (a git: revision may have built its lifecycle module)
        self.inner.close()


def memoized(runner: Runner, store: ResultStore | None, repos: Path) -> Runner:
    """`runner` behind the store when it is a real reference runner (else `runner` itself)."""
    if store is None or type(runner) not in REFERENCE_RUNNERS:
        return runner
    assert isinstance(runner, BunReferenceRunner)
    return MemoizedReference(runner, store, repos)


# --- lifecycle probes ------------------------------------------------------------------------------------------


class ProbeReplay(Runner):
    """One lifecycle probe on a memoized reference, as a unit: keyed by its open request (its temporary
    directory left out), its whole step list and its checkout's digest. A stored probe answers every request
    from the store, each checked against the request it answered when recorded (a request that differs is an
    error naming the store, and the entry is dropped), and gives what HEAD resolved to after each repository
    step, so its working copy is never made; otherwise the reference answers, and the probe is stored on
    close when every request was answered with a record or an exception upstream threw."""

    def __init__(self, owner: MemoizedReference, steps: list[dict[str, Any]], checkout: Path) -> None:
        self.owner, self.steps, self.checkout = owner, steps, checkout
        self.name = owner.name
        self.cached = ""  # the key, when the whole probe was answered from the store
        self._key: str | None = None
        self._work = ""
        self._opened = ""  # the open request as stored (its directory a placeholder), once looked up
        self._stored: list[dict[str, Any]] | None = None
        self._stored_heads: list[str | None] = []
        self._recorded: list[dict[str, Any]] = []
        self._heads: list[str | None] = []  # HEAD after each repository step, as the live probe's copy had it
        self._next = 0

    def _templated(self, value: Any) -> str:
        text = canonical(value).decode("ascii")
        return text.replace(self._work, WORK) if self._work else text

    def _restored(self, text: str) -> Any:
        return json.loads(text.replace(WORK, self._work))

    def _look_up(self, request: LifecycleOpen) -> None:
        """The probe's key and stored entry, from its open request (once)."""
        if self._opened:
            return
        self._work = json.dumps(str(request.storage_dir.parent), ensure_ascii=True)[1:-1]
        self._opened = self._templated(request.to_wire(""))
        self._key = self._probe_key(self._opened)
        stored = self.owner.store.get(self._key) if self._key is not None else None
        if self._key and isinstance(stored, dict) and stored.get("answers") and isinstance(stored.get("heads"), list):
            self._stored, self._stored_heads, self.cached = stored["answers"], stored["heads"], self._key

    def working_copy(self, request: LifecycleOpen, make: Callable[[], Checkout]) -> RepositorySteps:
        """The probe's working copy for `request`: none when the store answers it whole (the stored heads stand
        in), else `make()`'s, whose heads are recorded with the probe."""
        self._look_up(request)
        if self._stored is not None:
            return StoredHeads(self._stored_heads, self._key or "")
        return RecordingCheckout(make(), self._heads)

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        started = time.perf_counter()
        self._look_up(request)
        if self._stored is not None:
            return self._answer(self._opened, started)
        outcome = self.owner.live().lifecycle_open(request)
        self._recorded.append({"request": self._opened, "outcome": self._templated(encode_outcome(outcome))})
        return outcome

    def _probe_key(self, opened: str) -> str | None:
        identity = self.owner.identity()
        if identity is None:
            return None
        try:
            repository = repository_digest(self.checkout, self.owner.store)
        except OSError as error:  # a checkout that cannot be read whole: the probe runs, unstored
            print(f"warning: {self.checkout}: not memoized ({error})", file=sys.stderr)
            return None
        probe = {
            "op": "lifecycle",
            "reference": identity,
            "open": opened,
            "steps": self.steps,
            "repository": repository,
            "builders": files_digest(BUILDERS),
        }
        return sha256_hex(canonical(probe))

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        started = time.perf_counter()
        sent = self._templated(step)
        if self._stored is not None:
            return self._answer(sent, started)
        outcome = self.owner.live().lifecycle_step(step)
        self._recorded.append({"request": sent, "outcome": self._templated(encode_outcome(outcome))})
        return outcome

    def _answer(self, sent: str, started: float) -> Outcome:
        assert self._stored is not None and self._key is not None
        entry = self._stored[self._next] if self._next < len(self._stored) else None
        self._next += 1
        if entry is None or entry["request"] != sent:
            self.owner.store.forget(self._key)
            self.cached, self._stored = "", []
            return Outcome(
                "error",
                error=f"the result store's probe {self._key[:16]} was recorded with other requests (a harness bug; "
                "it is dropped: run again, or with --no-cache)",
            )
        try:
            return decode_outcome(self._restored(entry["outcome"]), self._key, started)
        except (TypeError, ValueError):
            self.owner.store.forget(self._key)
            self.cached, self._stored = "", []
            return Outcome("error", error=f"the result store's probe {self._key[:16]} no longer decodes (dropped)")

    def lifecycle_close(self) -> None:
        if self._stored is not None:
            return
        self.owner.lifecycle_close()
        made = [s for s in self.steps if s.get("kind") in REPOSITORY_STEPS]  # the harness's own, never sent
        complete = len(self._recorded) == 1 + len(self.steps) - len(made) and len(self._heads) == len(made)
        if self._key and complete and all(storable(Outcome(**json.loads(e["outcome"]))) for e in self._recorded):
            self.owner.store.put(self._key, "lifecycle", self.name, {"answers": self._recorded, "heads": self._heads})

    def compile(self, request: CompileRequest) -> Outcome:
        return self.owner.compile(request)

    def ask(self, request: dict[str, Any]) -> Outcome:
        return self.owner.ask(request)


class RepositorySteps(Protocol):
    """Where a probe's side makes the harness's repository steps: what HEAD resolves to after each one."""

    def run(self, kind: str, value: Any) -> str | None: ...


class RecordingCheckout:
    """A live probe's working copy: each repository step's HEAD is also kept for the stored probe."""

    def __init__(self, checkout: Checkout, heads: list[str | None]) -> None:
        self.checkout, self.heads = checkout, heads

    def run(self, kind: str, value: Any) -> str | None:
        head = self.checkout.run(kind, value)
        self.heads.append(head)
        return head


class StoredHeads:
    """A stored probe's stand-in for its working copy: what HEAD resolved to after each repository step."""

    def __init__(self, heads: list[str | None], key: str) -> None:
        self._heads, self._key = iter(heads), key

    def run(self, kind: str, value: Any) -> str | None:
        head = next(self._heads, ...)
        if head is ...:
            raise LookupError(f"the result store's probe {self._key[:16]} holds fewer repository steps (a harness bug)")
        return head


def working_copy(runner: Runner, request: LifecycleOpen, make: Callable[[], Checkout]) -> RepositorySteps:
    """Where a probe's side makes its repository steps: `make()`'s checkout, or none for a stored probe."""
    return runner.working_copy(request, make) if isinstance(runner, ProbeReplay) else make()


def for_probe(runner: Runner, scenario: Scenario, cache: Path, steps: list[dict[str, Any]]) -> Runner:
    """The runner a lifecycle probe replays on: a ProbeReplay for a memoized reference, else `runner` itself.
    `steps`: the probe's steps in the protocol's form (harness.run.lifecycle.wire_steps), part of its key."""
    if not isinstance(runner, MemoizedReference) or runner.identity() is None:
        return runner
    from harness.repo.build import materialize_repo

    try:
        checkout = materialize_repo(scenario, cache).root
    except Exception:  # the replay reports it
        return runner
    return ProbeReplay(runner, steps, checkout)


def served_key(runner: Runner | None) -> str:
    """The store's key when a probe was answered from the store as a whole, else ``."""
    return runner.cached if isinstance(runner, ProbeReplay) else ""
