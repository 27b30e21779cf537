"""One measurement each: the port in process, the floor, the port as a process, the reference, peak RSS.

Every probe returns plain numbers (milliseconds, KiB); the bench decides what to compare.
Timings are the median of several runs after one warm-up run, with the repetitions chosen
so that a probe takes about `budget` seconds (at least `least`, at most `most` runs).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from harness.core.model import CompileRequest, Outcome
from harness.runners.bun_reference import BunReferenceRunner
from memfs_prompt import compile_system_prompt
from memfs_prompt.cli import parse_now
from memfs_prompt.compiler import CompiledPrompt
from memfs_prompt.profiles import Profile

NOW = "2026-01-02T03:04:05.678Z"
T = TypeVar("T")


@dataclass(frozen=True)
class Timing:
    median_ms: float
    min_ms: float
    runs: int

    def to_json(self) -> dict[str, float | int]:
        return {"median_ms": round(self.median_ms, 3), "min_ms": round(self.min_ms, 3), "runs": self.runs}


def timed(
    action: Callable[[], object], *, budget: float = 1.0, least: int = 3, most: int = 25, warmup: bool = True
) -> Timing:
    """Run `action` once to warm up, then repeatedly; the median and minimum wall time in ms."""
    if warmup:
        started = time.perf_counter()
        action()
        first = time.perf_counter() - started
        runs = max(least, min(most, int(budget / max(first, 1e-4))))
    else:
        runs = least
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return Timing(statistics.median(samples), min(samples), runs)


def recorded(action: Callable[[], T]) -> tuple[Callable[[], None], list[T]]:
    """`action`, keeping what each call returned (the last answer of a timed probe, to compare outputs)."""
    seen: list[T] = []
    return (lambda: seen.append(action())), seen


def request_for(memory_dir: Path) -> CompileRequest:
    return CompileRequest(memory_dir, "You are a helpful agent.\n\n{CORE_MEMORY}", "agent-bench", "conv-bench", NOW)


def port_compile(memory_dir: Path, profile: Profile, git_env: dict[str, str]) -> Callable[[], CompiledPrompt]:
    now = parse_now(NOW)
    request = request_for(memory_dir)
    return lambda: compile_system_prompt(
        memory_dir,
        system=request.system,
        agent_id=request.agent_id,
        conversation_id=request.conversation_id,
        now=now,
        profile=profile,
        git_env=git_env,
    )


def read_blob_oids(memory_dir: Path, paths: list[str], git_env: dict[str, str]) -> list[bytes]:
    """The floor's part one: one `git ls-tree -r HEAD`, keeping the blobs of `paths` (what the port reads)."""
    listing = subprocess.run(
        ["git", "ls-tree", "-r", "-z", "HEAD"], cwd=memory_dir, env=git_env, capture_output=True, check=True
    ).stdout
    wanted = {p.encode("utf-8") for p in paths}
    oids = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        if name in wanted:
            oids.append(meta.split(b" ")[2])
    return oids


def floor(memory_dir: Path, paths: list[str], git_env: dict[str, str]) -> Callable[[], object]:
    """One `git ls-tree -r HEAD` plus one `git cat-file --batch` over the same blobs, all output read."""

    def run() -> int:
        oids = read_blob_oids(memory_dir, paths, git_env)
        batch = b"".join(o + b"\n" for o in oids)
        done = subprocess.run(
            ["git", "cat-file", "--batch"], cwd=memory_dir, env=git_env, input=batch, capture_output=True, check=True
        )
        return len(done.stdout)

    return run


def port_process(memory_dir: Path, profile: Profile, git_env: dict[str, str]) -> Callable[[], object]:
    """The whole `python -m memfs_prompt compile DIR --json` process, start to exit."""
    argv = [
        sys.executable,
        "-m",
        "memfs_prompt",
        "compile",
        str(memory_dir),
        "--json",
        "--profile",
        profile.name,
        "--now",
        NOW,
    ]
    env = {**git_env, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}

    def run() -> int:
        done = subprocess.run(argv, env=env, capture_output=True, check=True)
        return len(done.stdout)

    return run


def reference_compile(runner: BunReferenceRunner, memory_dir: Path) -> Callable[[], Outcome]:
    request = request_for(memory_dir)

    def run() -> Outcome:
        outcome = runner.compile(request)
        if outcome.status != "ok":
            raise RuntimeError(f"the reference could not compile {memory_dir}: {outcome.error or outcome.thrown}")
        return outcome

    return run


def process_peak_rss_kib(pid: int) -> int:
    """VmHWM of a live process: its peak resident set so far, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmHWM for process {pid}")


PORT_RSS_SCRIPT = """
import json, resource, sys
from pathlib import Path
import memfs_prompt.compiler, memfs_prompt.quirks
memfs_prompt.quirks.locale_compare_key("warm")
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from memfs_prompt import compile_system_prompt
from memfs_prompt.profiles import resolve_profile
compile_system_prompt(Path(sys.argv[1]), system="{CORE_MEMORY}", agent_id="a", conversation_id="c",
                      profile=resolve_profile(sys.argv[2]))
print(json.dumps({"baseline_kib": baseline, "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "git_peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def port_peak_rss(memory_dir: Path, profile: Profile, git_env: dict[str, str]) -> dict[str, int]:
    """Peak RSS of a fresh Python process compiling `memory_dir` (and of its git child), in KiB."""
    env = {**git_env, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run(
        [sys.executable, "-c", PORT_RSS_SCRIPT, str(memory_dir), profile.name],
        env=env,
        capture_output=True,
        check=True,
        text=True,
    )
    return dict(json.loads(done.stdout))


def reference_peak_rss(runner: BunReferenceRunner, memory_dir: Path) -> dict[str, int]:
    """Peak RSS of a freshly started reference process: after start-up, and after compiling `memory_dir`."""
    runner.start()
    pid = runner.process.pid
    assert pid is not None, runner.start_error
    baseline = process_peak_rss_kib(pid)
    reference_compile(runner, memory_dir)()
    return {"baseline_kib": baseline, "peak_kib": process_peak_rss_kib(pid)}
