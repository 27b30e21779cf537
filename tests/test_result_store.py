"""The result store (harness.runners.result_store): the key misses when any input of a reference's outcome
changes, errors are never stored, and a report made from the store is the cold report plus its `cached` marks.

The integration tests run the default reference (bun and the pinned PyPI release, from the shared cache) with
repositories, the store and the reference's home in a temporary cache.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import stat
import subprocess
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.acquire import manifest
from harness.acquire.releases import ReferenceUnavailable
from harness.cases.load import load_scenario
from harness.cli import main as cli
from harness.core.model import ClientSkills, CompileRequest, Outcome
from harness.core.reference import ReferenceSpec, default_reference
from harness.core.sizes import parse_size
from harness.repo.build import materialize_repo
from harness.run.session import Session, build_request
from harness.runners import result_store
from harness.runners.bun_reference import BunReferenceRunner
from harness.runners.result_store import MemoizedReference, ResultStore, repository_root, storable
from harness.runners.result_store.key import artifact_identity, index_without_stat, tree_digest

CASES = Path(__file__).resolve().parents[1] / "cases"
PICKED = [  # an ok record, an exception upstream threw, a polluting case, a lifecycle probe, a golden case
    CASES / "compile" / "inputs-include-memfs-false.yaml",
    CASES / "compile" / "builtins-function-arguments.yaml",
    CASES / "compile" / "builtins-method-prototype.yaml",
    CASES / "lifecycle" / "probe-spec-chapter9.yaml",
    CASES / "compile" / "spec-v2-chapter8-example.yaml",
]


@pytest.fixture
def memoizing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(result_store.NO_CACHE_ENV, raising=False)


# --- the store ------------------------------------------------------------------------------------------------


def test_sizes_are_bytes_or_powers_of_1024() -> None:
    assert [parse_size(t) for t in ("1048576", "64k", "512M", "2G", "1.5g", "10MiB")] == [
        1 << 20,
        64 << 10,
        512 << 20,
        2 << 30,
        3 << 29,
        10 << 20,
    ]
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_a_value_is_read_back_and_eviction_drops_the_least_recently_used(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "s.sqlite", max_bytes=1 << 30)
    for name in ("a", "b", "c"):
        store.put(name, "compile", "ref", {"name": name, "pad": "x" * 500})
    store.get("a")  # a is now used after b and c
    store.close()
    store = ResultStore(tmp_path / "s.sqlite", max_bytes=1 << 30)
    one = store.stats()["bytes"] // 3
    removed, _ = store.prune(2 * one + 1)
    assert removed == 1 and store.get("b") is None and store.get("a") == {"name": "a", "pad": "x" * 500}
    assert store.clear() == 2 and store.stats()["entries"] == 0
    store.close()


def test_equal_values_are_decoded_once_and_a_value_that_does_not_decode_is_a_miss(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "s.sqlite")
    store.put("0.32.18", "compile", "a", {"record": {"coreMemory": "same"}})
    store.put("0.34.12", "compile", "b", {"record": {"coreMemory": "same"}})
    store.put("other", "compile", "b", {"record": {"coreMemory": "other"}})
    assert store.get("0.32.18") is store.get("0.34.12")  # one decoded value, shared by the reads
    assert store.get("other") == {"record": {"coreMemory": "other"}}
    store._db.execute("UPDATE results SET value = ? WHERE key = 'other'", (b"not zlib",))
    assert store.get("other") is None and not store.contains("other")  # dropped
    store.close()


def test_forgetting_a_reference_drops_only_its_outcomes(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "s.sqlite", max_bytes=1 << 30)
    store.put("a", "compile", "pypi:0.34.12", {"v": 1})
    store.put("b", "lifecycle", "pypi:0.34.12", {"v": 2})
    store.put("c", "compile", "letta-code@0.25.3", {"v": 3})
    assert store.forget_reference("pypi:0.34.12") == 2
    assert store.get("a") is None and store.get("b") is None and store.get("c") == {"v": 3}
    store.close()


def test_the_bound_holds_when_the_store_closes(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "s.sqlite", max_bytes=4096)
    for index in range(40):
        store.put(f"k{index:02}", "compile", "ref", {"i": index, "pad": os.urandom(200).hex()})
    store.close()
    store = ResultStore(tmp_path / "s.sqlite", max_bytes=4096)
    stats = store.stats()
    assert 0 < stats["bytes"] <= 4096 and stats["entries"] < 40
    assert store.get("k39") is not None and store.get("k00") is None  # the newest stay
    store.close()


def _writer(path: str, start: int) -> None:
    store = ResultStore(Path(path))
    for index in range(start, start + 150):
        store.put(f"key{index}", "compile", "ref", {"i": index})
    store.close()


def test_several_processes_and_threads_write_one_store(tmp_path: Path) -> None:
    path = tmp_path / "results" / "store.sqlite"  # created by whichever opens it first
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_writer, args=(str(path), 1000 * n)) for n in range(3)]
    for process in processes:
        process.start()
    shared = ResultStore(path)
    threads = [
        threading.Thread(target=lambda n=n: [shared.put(f"t{n}-{i}", "compile", "r", {"i": i}) for i in range(100)])
        for n in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for process in processes:
        process.join(120)
        assert process.exitcode == 0
    assert shared.stats()["entries"] == 3 * 150 + 3 * 100
    assert shared.get("key2149") == {"i": 2149}
    shared.close()


def test_a_store_that_fails_is_a_warning_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = tmp_path / "results" / "store.sqlite"
    garbage.parent.mkdir()
    garbage.write_bytes(b"not a database, " * 100)
    assert result_store.open_store(tmp_path) is None and "running without it" in capsys.readouterr().err
    store = ResultStore(tmp_path / "other.sqlite")
    store.put("k", "compile", "ref", {"v": 1})
    store._db.close()  # as a file gone bad under a running session
    assert store.get("k") is None and store.contains("k") is False
    store.put("k2", "compile", "ref", {"v": 2})
    assert capsys.readouterr().err.count("going on without it") == 1


def test_errors_crashes_timeouts_unsupported_and_harness_bugs_are_not_storable() -> None:
    assert storable(Outcome("ok", record={})) and storable(Outcome("thrown", thrown="TypeError: x"))
    assert not storable(Outcome("error", error="no answer within 60 s (killed)"))
    assert not storable(Outcome("error", error="the process exited (code 1) without answering"))
    assert not storable(Outcome("unsupported", error="op lifecycle_open"))
    assert not storable(Outcome("ok", record={}, harness_bug=True))


# --- the repository's digest ------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _staged_repo(root: Path, text: str) -> Path:
    repo = root / "memory"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "a.md").write_text(text)
    _git(repo, "add", "a.md")
    (root / ".complete").write_text("ok\n")
    return root


def test_the_digest_leaves_out_when_the_index_was_written_but_not_what_files_hold_or_their_mtimes(
    tmp_path: Path,
) -> None:
    one = _staged_repo(tmp_path / "one", "same\n")
    two = _staged_repo(tmp_path / "two", "same\n")
    dated = (one / "memory" / "a.md").stat().st_mtime_ns
    os.utime(two / "memory" / "a.md", (1, 1))
    _git(two / "memory", "add", "a.md")  # an index with other stat data, the same entries
    os.utime(two / "memory" / "a.md", ns=(dated, dated))  # the file dated as in `one` again
    assert (one / "memory/.git/index").read_bytes() != (two / "memory/.git/index").read_bytes()
    assert tree_digest(one) == tree_digest(two)
    other = _staged_repo(tmp_path / "other", "diff\n")
    assert tree_digest(other) != tree_digest(one)
    os.utime(two / "memory" / "a.md", (2, 2))  # a work-tree file's mtime is content (the Memory tool reads it)
    assert tree_digest(two) != tree_digest(one)
    os.utime(two / "memory" / "a.md", ns=(dated, dated))
    os.utime(two / "memory" / ".git" / "HEAD", (3, 3))  # a git directory's are not
    assert tree_digest(two) == tree_digest(one)
    (two / "memory" / "a.md").chmod(0o755)  # the executable bit is content
    assert tree_digest(two) != tree_digest(one)
    assert index_without_stat(b"not an index") == b"not an index"


def test_only_repositories_the_session_built_are_vouched_for(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    built = repos / "0123abcd"
    (built / "memory").mkdir(parents=True)
    assert repository_root(built / "memory", repos) is None  # not marked complete
    (built / ".complete").write_text("ok\n")
    assert repository_root(built / "memory" / "sub", repos) == built
    (repos / ".lifecycle" / "x").mkdir(parents=True)
    (repos / ".lifecycle" / "x" / ".complete").write_text("ok\n")
    assert repository_root(repos / ".lifecycle" / "x", repos) is None
    assert repository_root(tmp_path / "elsewhere", repos) is None


def test_a_stand_in_or_subclass_of_a_reference_runner_is_never_memoized(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "s.sqlite")

    class Recording(BunReferenceRunner):
        pass

    spec = ReferenceSpec.parse(default_reference())
    recording = Recording(spec, tmp_path / "home", tmp_path / "repos")
    assert result_store.memoized(recording, store, tmp_path / "repos") is recording
    assert result_store.memoized(recording, None, tmp_path / "repos") is recording
    real = BunReferenceRunner(spec, tmp_path / "home", tmp_path / "repos")
    assert isinstance(result_store.memoized(real, store, tmp_path / "repos"), MemoizedReference)
    bundle = BunReferenceRunner(ReferenceSpec.parse("bundle:/nowhere/letta.js"), tmp_path / "home", tmp_path / "repos")
    assert MemoizedReference(bundle, store, tmp_path / "repos").identity() is None  # nothing verifies a bundle file
    store.close()


# --- the key, against the default reference ---------------------------------------------------------------------


class Stored:
    """A temporary cache whose store holds the default reference's outcome of one compile case."""

    def __init__(self, root: Path) -> None:
        self.cache, self.spec = root, ReferenceSpec.parse(default_reference())
        self.scenario = load_scenario(PICKED[0])
        self.repo = materialize_repo(self.scenario, root)
        self.request = build_request(self.scenario, self.repo)
        self.store = ResultStore(root / "results" / "store.sqlite")
        cold = self.wrapper()
        self.outcome = cold.compile(self.request)
        self.argv, self.flags = cold.inner.process.argv, cold.inner.interpreter_flags()
        cold.close()

    def wrapper(self, spec: ReferenceSpec | None = None, timeout: float = 120.0) -> MemoizedReference:
        inner = BunReferenceRunner(spec or self.spec, self.cache / "home", self.cache / "repos", timeout)
        return MemoizedReference(inner, self.store, self.cache / "repos")

    def hit(self, request: CompileRequest | None = None, spec: ReferenceSpec | None = None) -> bool:
        return self.wrapper(spec).stored(request or self.request) is not None


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory, reference_bun: Path, release_bundle: Any) -> Stored:
    release_bundle(default_reference())
    return Stored(tmp_path_factory.mktemp("store-cache"))


@pytest.mark.integration
def test_a_stored_outcome_is_served_without_starting_the_reference(stored: Stored) -> None:
    assert stored.outcome.status == "ok" and stored.outcome.cache_key == ""
    assert stored.argv[1 : 1 + len(stored.flags)] == stored.flags  # the flags in the key are the ones it ran with
    warm = stored.wrapper()
    again = warm.compile(stored.request)
    assert again.cache_key and again.record == stored.outcome.record
    assert result_store.encode_outcome(again) == result_store.encode_outcome(stored.outcome)
    assert warm.inner.process.starts == 0 and warm.describe()["starts"] == 0


REQUEST_CHANGES = {
    "system": {"system": "You are another agent.\n\n{CORE_MEMORY}"},
    "agent_id": {"agent_id": "agent-other"},
    "conversation_id": {"conversation_id": "conv-other"},
    "now": {"now": "2026-01-02T03:04:05.679Z"},
    "previous_message_count": {"previous_message_count": 7},
    "include_memfs": {"include_memfs": True},
    "client_skills": {"client_skills": ClientSkills([])},
}


@pytest.mark.integration
@pytest.mark.parametrize("field", sorted(REQUEST_CHANGES))
def test_any_other_request_field_misses(stored: Stored, field: str) -> None:
    changed = replace(stored.request, **REQUEST_CHANGES[field])
    assert changed != stored.request
    assert stored.hit() and not stored.hit(changed)


@pytest.mark.integration
def test_the_same_repository_at_another_path_misses(stored: Stored) -> None:
    copy = stored.cache / "repos" / "copy-of-it"
    shutil.copytree(stored.repo.root, copy, symlinks=True)
    moved = replace(stored.request, memory_dir=copy / stored.request.memory_dir.relative_to(stored.repo.root))
    assert not stored.hit(moved)


@pytest.mark.integration
def test_other_repository_bytes_at_the_same_path_miss(stored: Stored, tmp_path: Path) -> None:
    root = stored.cache / "repos" / "rebuilt"
    shutil.copytree(stored.repo.root, root, symlinks=True)
    request = replace(stored.request, memory_dir=root / stored.request.memory_dir.relative_to(stored.repo.root))
    wrapper = stored.wrapper()
    stored.store.put(wrapper.compile_key(request) or "", "compile", "x", result_store.encode_outcome(stored.outcome))
    assert stored.hit(request)
    # rebuilt in place (a harness whose builder changed): one more byte in a loose object, a new marker
    loose = next(p for p in (root / "memory" / ".git" / "objects").rglob("*") if p.is_file())
    loose.chmod(stat.S_IWUSR | stat.S_IRUSR)
    (root / ".complete").unlink()
    loose.write_bytes(loose.read_bytes() + b"\0")
    (root / ".complete").write_text("ok\n")
    os.utime(root / ".complete", ns=(1, 1))
    assert not stored.hit(request)


@pytest.mark.integration
def test_another_artifact_digest_misses(stored: Stored, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.core import registries

    pinned = registries.load_manifest()
    entry = registries.pin_table(pinned, stored.spec.kind)[stored.spec.value]
    entry[registries.registry(stored.spec.kind).digest_key] = "0" * 64
    monkeypatch.setattr(registries, "load_manifest", lambda: pinned)
    assert not stored.hit()


@pytest.mark.integration
def test_another_build_of_the_runtime_at_the_same_path_misses(
    stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference_bun: Path
) -> None:
    fake = tmp_path / "bun"

    def bun_answering(revision: str) -> None:
        fake.write_text(
            f'#!/bin/sh\n[ "$1" = --revision ] && {{ echo {revision}; exit 0; }}\nexec {reference_bun} "$@"\n'
        )
        fake.chmod(0o755)

    bun_answering("1.4.5+aaaaaaaaa")
    monkeypatch.setattr("harness.runners.bun_reference.ensure_bun", lambda: fake)
    before = stored.wrapper().identity()
    bun_answering("1.4.5+bbbbbbbbbbb")  # the same path, another build
    assert stored.wrapper().identity() != before
    assert not stored.hit()


@pytest.mark.integration
def test_another_interpreter_flag_misses(stored: Stored, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BunReferenceRunner, "interpreter_flags", lambda self: [*stored.flags, "--smol"])
    assert not stored.hit()


@pytest.mark.integration
def test_other_driver_bytes_miss(stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    edited = tmp_path / "driver.mjs"
    edited.write_bytes(manifest.DRIVER_PATH.read_bytes() + b"// one more line\n")
    monkeypatch.setattr(manifest, "DRIVER_PATH", edited)
    assert not stored.hit()


@pytest.mark.integration
def test_another_locale_runtime_or_environment_misses(stored: Stored, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not stored.hit(spec=stored.spec.with_runtime("bun", "da_DK.UTF-8"))
    if shutil.which("node"):
        assert not stored.hit(spec=stored.spec.with_runtime("node"))
    real_env = BunReferenceRunner.reference_env
    monkeypatch.setattr(BunReferenceRunner, "reference_env", lambda self: {**real_env(self), "TZ": "Europe/Oslo"})
    assert not stored.hit()


def test_another_runtime_deps_lockfile_misses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """0.25.x load sharp from reference/runtime-deps/sharp-0.34: its lockfile is part of the artifact."""
    spec = ReferenceSpec.parse("npm:0.25.9")
    runner = BunReferenceRunner(spec, tmp_path / "home", tmp_path / "repos")
    before = artifact_identity(runner)
    copy = tmp_path / "reference"
    shutil.copytree(manifest.REFERENCE_DIR / "runtime-deps", copy / "runtime-deps")
    lock = copy / "runtime-deps" / "sharp-0.34" / "package-lock.json"
    lock.write_text(lock.read_text() + "\n")
    monkeypatch.setattr(manifest, "REFERENCE_DIR", copy)
    after = artifact_identity(runner)
    assert before is not None and after is not None and before != after
    assert before["integrity"] == after["integrity"]


# --- what is not stored -------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_a_reference_that_cannot_run_or_times_out_stores_nothing(
    stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = replace(stored.request, agent_id="agent-never-stored")
    entries = stored.store.stats()["entries"]
    slow = stored.wrapper(timeout=0.5)
    slow.live()  # started (the start has a timeout of its own), then stopped: it cannot answer in time
    pid = slow.inner.process.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    timed_out = slow.compile(request)
    slow.close()
    assert timed_out.status == "error" and "no answer within" in (timed_out.error or "")

    def unavailable(*_: object) -> Path:
        raise ReferenceUnavailable("the release cannot be fetched")

    monkeypatch.setattr("harness.runners.bun_reference.resolve_bundle", unavailable)
    broken = stored.wrapper()
    failed = broken.compile(request)
    assert failed.status == "error" and "cannot be fetched" in (failed.error or "")
    assert stored.store.stats()["entries"] == entries and not stored.hit(request)


@pytest.mark.integration
def test_a_probe_the_reference_does_not_serve_is_not_stored(
    tmp_path: Path, memoizing: None, reference_bun: Path, release_bundle: Any
) -> None:
    release_bundle(default_reference())
    probe = replace(load_scenario(PICKED[3]), delivery="persisted-reminder")  # upstream: unsupported
    with Session([ReferenceSpec.parse(default_reference())], cache=tmp_path, timeout=120) as session:
        (result,) = session.run([probe])
        assert result.status == "error" and not result.cached
        assert session.store is not None and session.store.stats()["kinds"] == {}


# --- a report made from the store ---------------------------------------------------------------------------------


def _report(directory: Path) -> dict[str, Any]:
    data = json.loads((directory / "report.json").read_text(encoding="utf-8"))
    data["run"]["command"] = None
    return data


def _without_marks(data: dict[str, Any]) -> dict[str, Any]:
    for entry in data["results"]:
        assert entry.pop("cached") is True and len(entry.pop("cache_key")) == 64
    return data


@pytest.mark.integration
def test_a_report_from_the_store_is_the_cold_report_with_cached_marks(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    memoizing: None,
    reference_bun: Path,
    release_bundle: Any,
) -> None:
    release_bundle(default_reference())
    monkeypatch.setattr("harness.run.session.cache_root", lambda: tmp_path / "cache")
    cases = [str(p) for p in PICKED]
    runs = {name: tmp_path / name for name in ("cold", "warm", "nocache")}
    lines = {}
    for name, directory in runs.items():
        extra = ["--no-cache"] if name == "nocache" else []
        assert cli.main(["run", *cases, "--no-timing", "--report", str(directory), *extra]) == 0
        lines[name] = next(line for line in capsys.readouterr().out.splitlines() if " results: " in line)
    assert result_store.NO_CACHE_ENV not in os.environ  # --no-cache held for its own command only
    cold, warm, nocache = (_report(runs[n]) for n in ("cold", "warm", "nocache"))
    schema = json.loads((Path(cli.__file__).parents[1] / "report" / "schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(json.loads((runs["warm"] / "report.json").read_text(encoding="utf-8")), schema)
    golden = [r for r in warm["results"] if r["reference"] == "golden"]
    assert len(golden) == 1 and "cached" not in golden[0]  # the port alone: nothing to remember
    references = [r for r in warm["results"] if r["reference"] != "golden"]
    assert len(references) == 4 and all(r.get("cached") for r in references)
    for entry in golden:
        warm["results"].remove(entry)
    cold["results"] = [r for r in cold["results"] if r["reference"] != "golden"]
    nocache["results"] = [r for r in nocache["results"] if r["reference"] != "golden"]
    assert "cached" not in json.dumps(cold["results"]) and "cached" not in json.dumps(nocache["results"])
    assert _without_marks(warm) == cold == nocache
    assert "4 cached" in lines["warm"] and "cached" not in lines["cold"] + lines["nocache"]
    with Session([ReferenceSpec.parse(default_reference())], cache=tmp_path / "cache") as session:
        session.run([load_scenario(p) for p in PICKED])
        assert session.describe_references()[0]["starts"] == 0  # nothing started: every answer was stored


def test_the_cache_command_shows_prunes_and_clears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path))
    assert cli.main(["cache", "stats"]) == 0 and "no result store" in capsys.readouterr().out
    store = ResultStore(result_store.store_path(tmp_path))
    for index in range(10):
        store.put(f"k{index}", "compile" if index % 2 else "lifecycle", "pypi:0.34.12", {"pad": "y" * 4000})
    store.close()
    assert cli.main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert "10 results" in out and "compile: 5 results" in out and "pypi:0.34.12: 10" in out
    assert cli.main(["cache", "stats", "--json"]) == 0 and json.loads(capsys.readouterr().out)["entries"] == 10
    assert cli.main(["cache", "prune", "--max-size", "1k"]) == 0 and "pruned" in capsys.readouterr().out
    assert cli.main(["cache", "clear"]) == 0 and "cleared" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["cache", "prune", "--max-size", "lots"])


def _with_step(scenario: Any, index: int, step: dict[str, Any]) -> Any:
    steps = list(scenario.steps)
    steps[index] = step
    return replace(scenario, steps=tuple(steps))


@pytest.mark.integration
def test_a_probe_is_stored_whole_and_any_other_step_or_commit_misses(
    tmp_path: Path, memoizing: None, reference_bun: Path, release_bundle: Any
) -> None:
    release_bundle(default_reference())
    probe = load_scenario(PICKED[3])
    commit = probe.steps[1]["commit"]
    changed = {
        "turn text": _with_step(probe, 0, {"turn": "hello there"}),
        "commit": _with_step(probe, 1, {"commit": {**commit, "message": "another message"}}),
        "model": replace(probe, model="anthropic/claude-opus-4-8"),
        "system": replace(probe, inputs={**probe.inputs, "system": probe.inputs["system"] + " "}),
    }
    with Session([ReferenceSpec.parse(default_reference())], cache=tmp_path, timeout=120) as session:
        (cold,) = session.run([probe])
        (warm,) = session.run([probe])
        assert cold.status == warm.status == "pass" and not cold.cached and warm.cached
        assert warm.turns == cold.turns and warm.reasons == cold.reasons
        for what, scenario in changed.items():
            (result,) = session.run([scenario])
            assert not result.cached, what
        assert session.store is not None and session.store.stats()["kinds"]["lifecycle"]["entries"] == 1 + len(changed)


@pytest.mark.integration
@pytest.mark.parametrize("case", ["amend-head", "reset-to-earlier-commit", "break-head-unborn"])
def test_a_probe_with_any_repository_step_is_stored(
    tmp_path: Path, memoizing: None, reference_bun: Path, release_bundle: Any, case: str
) -> None:
    """Amends, resets and broken HEADs are the harness's own steps, never sent, as commits are: a probe with them is
    complete when every step that is sent was answered (it was never stored when only commits were left out)."""
    release_bundle(default_reference())
    probe = load_scenario(CASES / "lifecycle" / f"{case}.yaml")
    with Session([ReferenceSpec.parse(default_reference())], cache=tmp_path, timeout=120) as session:
        (cold,) = session.run([probe])
        (warm,) = session.run([probe])
        assert not cold.cached and warm.cached, case
        assert (warm.status, warm.turns, warm.reasons) == (cold.status, cold.turns, cold.reasons)
