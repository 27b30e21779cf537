"""bun's transpiler cache in the reference home is pruned least recently used first, down to its bound."""

from __future__ import annotations

import os
from pathlib import Path

from harness.acquire.transpiler_cache import prune_transpiler_cache, transpiler_cache


def test_the_least_recently_used_entries_go_first_until_the_cache_is_under_its_bound(tmp_path: Path) -> None:
    cache = transpiler_cache(tmp_path)
    cache.mkdir(parents=True)
    for age, name in enumerate(["newest", "middle", "oldest"]):
        path = cache / f"{name}.pile"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1_000_000 - age * 10, 1_000_000 - age * 10))
    assert prune_transpiler_cache(tmp_path, limit=250) == 100
    assert sorted(p.name for p in cache.iterdir()) == ["middle.pile", "newest.pile"]
    assert prune_transpiler_cache(tmp_path, limit=250) == 0
    assert prune_transpiler_cache(tmp_path, limit=0) == 200 and not list(cache.iterdir())


def test_a_home_without_a_cache_is_left_alone(tmp_path: Path) -> None:
    assert prune_transpiler_cache(tmp_path / "nowhere", limit=0) == 0
