"""Fuzz throughput: differential repositories per second of `conformance fuzz`'s loop (issue 17).

The loop is the fuzzer's own (harness.tools.fuzz.campaign.fuzz): Hypothesis generates a batch, the oracle builds
the repositories and sends them to the warm reference at once, the Python port compiles them while the
reference does, and each pair is judged. Shrinking and reducing are off (a divergence found is not
worked on), so the number is the generate + build + compile + compare rate. The reference's start-up is
not counted. The machine's load average is recorded beside it: on a shared machine the rate follows the
CPU left over, and the CPU seconds per repository (this process and its children) are the steadier number.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.core.reference import ReferenceSpec
from harness.run.corpus import RunOptions, open_session
from harness.tools.batch_compile import scratch_parent
from harness.tools.fuzz.campaign import fuzz


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_fuzz(spec: ReferenceSpec, seconds: float = 30.0, seed: int = 1) -> dict[str, Any]:
    """One fuzz run of `seconds` against `spec` (as `conformance fuzz --seed seed` runs it, without shrinking)."""
    load_before = [round(x, 2) for x in os.getloadavg()]
    with (
        tempfile.TemporaryDirectory(prefix="bench-fuzz-", dir=scratch_parent()) as tmp,
        open_session(RunOptions([spec], cache=Path(tmp))) as session,
    ):
        started = time.monotonic()
        session.start()
        startup = time.monotonic() - started
        cpu, children = time.process_time(), _children_cpu()
        report = fuzz(session, seconds=seconds, seed=seed, known=set(), hypothesis_shrink=False, reduce_seconds=0)
        cpu, children = time.process_time() - cpu, _children_cpu() - children
        restarts = sum(ref.runner.describe().get("starts", 1) for ref in session.references) - 1
    stats = report.stats
    examples = max(report.examples, 1)
    return {
        "seed": seed,
        "seconds": round(report.seconds, 2),
        "reference_startup_s": round(startup, 2),
        "repositories": report.examples,
        "repositories_per_s": round(report.examples / report.seconds, 2) if report.seconds else 0.0,
        "compiled": report.compiles,  # distinct repositories (Hypothesis repeats some examples: memoized)
        "compile_seconds": round(report.compile_seconds, 2),
        "generate_seconds": round(report.seconds - report.compile_seconds, 2),
        "build_seconds": round(stats.build, 2),
        "port_seconds": round(stats.port, 2),
        "reference_seconds": round(stats.reference, 2),  # answer to answer: overlaps the port and generation
        "reference_share": round(stats.reference / report.seconds, 3) if report.seconds else 0.0,
        "reference_restarts": restarts,
        "python_cpu_ms_per_repository": round(1000 * cpu / examples, 1),
        "children_cpu_ms_per_repository": round(1000 * children / examples, 1),
        "new_divergences": len(report.findings),
        "errors": len(report.errors),
        "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def summary(result: dict[str, Any]) -> str:
    """One line for the benchmark table."""
    r = result
    return (
        f"fuzz loop, {r['seconds']:.0f} s (seed {r['seed']}): {r['repositories']} repositories, "
        f"{r['repositories_per_s']:.1f}/s; reference share {100 * r['reference_share']:.0f}% "
        f"({r['reference_restarts']} restarts), generation {r['generate_seconds']:.1f} s, build "
        f"{r['build_seconds']:.1f} s, port {r['port_seconds']:.1f} s; CPU per repository "
        f"{r['python_cpu_ms_per_repository']} ms here + {r['children_cpu_ms_per_repository']} ms in git and bun; "
        f"load {r['load_average_before']}"
    )
