"""A protocol implementation with one planted bug: `python tests/planted_bug_impl.py [--profile NAME]`.

It runs the real `python -m memfs_prompt serve` loop (memfs_prompt.serve) with the memory labels sorted
by code point (Python's `str` order) instead of the port's collation (`quirks.locale_compare_key`, ICU
root as bun's `localeCompare`): the sort key is replaced where the compiler and both renderers bound it.
The skills block keeps the real collation, so only cases whose memory labels or paths sort differently
under the two orders (`B` before `a`, `_x` after `Z`, ...) fail against a reference. Its hello says so
in `info.plantedBug`: `--impl "cmd:python tests/planted_bug_impl.py"` is the suite's check that a wrong
implementation fails exactly the cases that exercise its bug, each verdict naming it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memfs_prompt import compiler, render_v1, render_v2, serve
from memfs_prompt.profiles import DEFAULT, resolve_profile

PLANTED_BUG = (
    "memory labels sorted by code point (Python str order), not by the port's collation "
    "(memfs_prompt.quirks.locale_compare_key) in memfs_prompt.compiler, render_v1 and render_v2"
)
SORTING_MODULES = (compiler, render_v1, render_v2)  # each imported `locale_compare_key` by name


def code_point_key(value: str) -> str:
    """The bug: a label's code points as its sort key."""
    return value


def plant() -> None:
    for module in SORTING_MODULES:
        module.locale_compare_key = code_point_key  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/planted_bug_impl.py", description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default=DEFAULT.name, help="the profile of requests that name none")
    args = parser.parse_args(argv)
    plant()
    info = {"implementation": "memfs_prompt with a planted bug (tests/planted_bug_impl.py)", "plantedBug": PLANTED_BUG}
    return serve.main(resolve_profile(args.profile), info=info)


if __name__ == "__main__":
    sys.exit(main())
