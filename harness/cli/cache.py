"""`conformance cache`: the result store of reference outcomes (harness.runners.result_store): stats, prune, clear.

Only the store: the pinned releases, bun, the built repositories and revision builds beside it in
$LETTA_CONFORMANCE_CACHE are not touched.
"""

from __future__ import annotations

import argparse
import datetime
import json

from harness.acquire.releases import cache_root
from harness.cli.common import Commands, UsageError
from harness.core.sizes import parse_size
from harness.runners.result_store import ResultStore, store_path


def size_text(size: int) -> str:
    """Bytes as `12.3 MiB`."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _when(stamp: float | None) -> str:
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if stamp else "-"


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def cmd_cache(args: argparse.Namespace) -> int:
    path = store_path(cache_root())
    if not path.exists():
        print(f"no result store at {path}" + (" (nothing to do)" if args.action != "stats" else ""))
        return 0
    try:
        store = ResultStore(path)
    except Exception as error:  # an unreadable file: name it, with the fix
        raise UsageError(f"result store {path}: cannot open it ({error}); remove the file to start afresh") from None
    try:
        if args.action == "stats":
            stats = store.stats()
            if args.json:
                print(json.dumps(stats, indent=1, sort_keys=True))
                return 0
            print(f"result store: {stats['path']}")
            print(
                f"  {stats['entries']} results, {size_text(stats['bytes'])} (bound {size_text(stats['max_bytes'])}), "
                f"{size_text(stats['on_disk_bytes'])} on disk"
            )
            for kind, row in stats["kinds"].items():
                print(f"  {kind}: {row['entries']} results, {size_text(row['bytes'])}")
            print(f"  last used: oldest {_when(stats['oldest_use'])}, newest {_when(stats['newest_use'])}")
            print(f"  {len(stats['references'])} references, {stats['repositories']} repository digests")
            for reference, row in stats["references"].items():
                print(f"    {reference}: {row['entries']}")
        elif args.action == "prune":
            removed, freed = store.prune(args.max_size)
            print(f"pruned {removed} results ({size_text(freed)}); {size_text(store.on_disk_bytes())} on disk")
        else:
            print(f"cleared {store.clear()} results from {path}")
    finally:
        store.close()
    return 0


def register(commands: Commands) -> None:
    cache = commands.add_parser(
        "cache", help="the result store of reference outcomes: stats, prune (LRU), clear (docs/scale.md)"
    )
    actions = cache.add_subparsers(dest="action", required=True)
    stats = actions.add_parser("stats", help="entries and size, by kind and by reference")
    stats.add_argument("--json", action="store_true", help="as JSON")
    prune = actions.add_parser("prune", help="evict the least recently used results down to a size")
    prune.add_argument("--max-size", type=_size, help="e.g. 200M, 1G (default: LETTA_CONFORMANCE_STORE_MAX or 512M)")
    actions.add_parser("clear", help="remove every stored result")
    cache.set_defaults(func=cmd_cache)
