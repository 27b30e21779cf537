"""Reference start-up (bun importing the release bundle), cold and warm.

Cold means nothing prepared: no `.conformance-driver-*.mjs` module beside the bundle and an
empty bun transpiler cache (it lives under the isolated HOME). The shared cache is never
touched for this: the pinned release and bun are linked (or copied) into a private cache
directory, without any prepared driver module, and the reference is started from there.
Warm is the same private cache started again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.acquire.releases import cache_root, ensure_bun, fetcher
from harness.core.reference import ReferenceSpec
from harness.core.registries import load_manifest, registry
from harness.runners.bun_reference import BunReferenceRunner


def _link_or_copy(source: str, dest: str) -> None:
    try:
        os.link(source, dest)
    except OSError:
        shutil.copy2(source, dest)


def private_cache(spec: ReferenceSpec, dest: Path) -> Path:
    """A cache directory holding only the pinned bun and `spec`'s release, with nothing prepared."""
    ensure_bun()
    if not spec.is_release:
        raise ValueError("cold start-up is measured for releases (npm:VERSION, pypi:VERSION)")
    # present and verified in the shared cache (a PyPI release's `node` link points at the shared Node, read only)
    fetcher(spec.kind).ensure(spec.value)
    release = Path(registry(spec.kind).cache_part) / spec.value
    shared = cache_root()
    version = load_manifest()["bun"]["version"]
    ignore = shutil.ignore_patterns(".conformance-driver-*")
    for part in (Path("bun") / version, release):
        if (shared / part).exists():
            shutil.copytree(shared / part, dest / part, symlinks=True, ignore=ignore, copy_function=_link_or_copy)
    return dest


@contextlib.contextmanager
def cache_env(path: Path) -> Iterator[None]:
    previous = os.environ.get("LETTA_CONFORMANCE_CACHE")
    os.environ["LETTA_CONFORMANCE_CACHE"] = str(path)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("LETTA_CONFORMANCE_CACHE", None)
        else:
            os.environ["LETTA_CONFORMANCE_CACHE"] = previous


def start_once(spec: ReferenceSpec, cache: Path) -> dict[str, float]:
    """Start a reference from `cache` and stop it: wall time to the hello answer, and the driver's import time."""
    runner = BunReferenceRunner(spec, cache / "home", cache / "repos", timeout=300)
    started = time.perf_counter()
    try:
        runner.start()
        wall = (time.perf_counter() - started) * 1000
        if runner.start_error:
            raise RuntimeError(f"the reference did not start: {runner.start_error}")
        return {"wall_ms": wall, "import_ms": float(runner.info.get("importMs", 0.0))}
    finally:
        runner.close()


def measure_startup(spec: ReferenceSpec, scratch: Path, warm_runs: int = 3) -> dict[str, Any]:
    cache = private_cache(spec, scratch / "cache")
    with cache_env(cache):
        cold = start_once(spec, cache)
        warm = [start_once(spec, cache) for _ in range(warm_runs)]
    return {
        "cold_ms": round(cold["wall_ms"], 1),
        "cold_import_ms": round(cold["import_ms"], 1),
        "warm_ms": round(statistics.median(w["wall_ms"] for w in warm), 1),
        "warm_import_ms": round(statistics.median(w["import_ms"] for w in warm), 1),
        "warm_runs": warm_runs,
    }
