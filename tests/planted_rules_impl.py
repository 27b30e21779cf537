"""A protocol implementation with four planted rule bugs: `python tests/planted_rules_impl.py [--bugs a,b]`.

It runs the real `python -m memfs_prompt serve` loop (memfs_prompt.serve) with four of upstream's rules
broken the way a port in another language commonly breaks them (BUGS):

- `trim`: JavaScript's `String.prototype.trim` replaced by Python's `str.strip()` (which strips U+0085 and
  U+001C..U+001F but keeps U+FEFF) wherever the compiler, the renderers and the frontmatter parser trim;
- `collation`: memory labels sorted by code point (Python's `str` order) instead of ICU root collation, as
  bun's `localeCompare` sorts them (the compiler and both renderers);
- `bom`: a leading byte order mark left in place before the frontmatter is matched
  (`frontmatter.normalize_newlines` keeps it), so a file starting with a BOM has no frontmatter;
- `view-name-order`: the Memory tool's view (op memory_view) lists a directory's entries by name only, with no
  edit times (no git log, no mtimes), as a port that skips upstream's `lastEditedByChild` would.
- `noop-commit`: the memory write tool commits a write that changed nothing (an empty commit, answered as a
  commit) where upstream skips it (0.25.x) or throws (0.30.28 to 0.33.2): the staged paths always look changed.

`--bugs` plants only some of them (for the suite's tests of attribution). Its hello names them in
`info.plantedBugs`: `--impl "cmd:python tests/planted_rules_impl.py"` is the suite's check that a failure
is explained by the rule the implementation breaks, each planted bug named as its rule.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memfs_prompt import compiler, frontmatter, memory_view, memory_write, render_v1, render_v2, serve
from memfs_prompt.profiles import DEFAULT, resolve_profile


def python_strip(value: str) -> str:
    """The trim bug: Python's whitespace set, not JavaScript's."""
    return value.strip()


def code_point_key(value: str) -> str:
    """The collation bug: a label's code points as its sort key."""
    return value


def keep_bom(content: str) -> str:
    """The BOM bug: CRLF and lone CR made LF, but a leading U+FEFF kept."""
    return content.replace("\r\n", "\n").replace("\r", "\n")


def no_edit_times(directory: str, names: list[str], env: object) -> dict[str, float]:
    """The view bug: every entry edited at time 0, so the tie-break (the name) is the whole order."""
    return {}


def _trim() -> None:
    for module in (compiler, frontmatter, render_v1, render_v2):  # each imported `js_trim` by name
        module.js_trim = python_strip  # type: ignore[attr-defined]


def _collation() -> None:
    for module in (compiler, render_v1, render_v2):  # each imported `locale_compare_key` by name
        module.locale_compare_key = code_point_key  # type: ignore[attr-defined]


def _bom() -> None:
    frontmatter.normalize_newlines = keep_bom  # type: ignore[assignment]


def _view_name_order() -> None:
    memory_view.last_edited_by_child = no_edit_times  # type: ignore[assignment]


def _noop_commit() -> None:
    real = memory_write._git

    def git(tool: memory_write._Tool, *args: str) -> str:
        if args[:3] == ("status", "--porcelain", "--"):  # the staged paths always look changed
            return real(tool, *args) or " M (planted)\n"
        if "commit" in args:
            args = (*args, "--allow-empty")
        return real(tool, *args)

    memory_write._git = git  # type: ignore[assignment]


BUGS: dict[str, tuple[str, Callable[[], None]]] = {
    "trim": ("JavaScript's trim replaced by Python's str.strip()", _trim),
    "collation": ("memory labels sorted by code point, not by ICU collation (localeCompare)", _collation),
    "bom": ("a leading BOM is not stripped before the frontmatter is matched", _bom),
    "view-name-order": ("the Memory tool's view lists entries by name only (no edit times)", _view_name_order),
    "noop-commit": ("the memory write tool commits a write that changed nothing", _noop_commit),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/planted_rules_impl.py", description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default=DEFAULT.name, help="the profile of requests that name none")
    parser.add_argument("--bugs", default=",".join(BUGS), help=f"the bugs to plant, comma-separated: {', '.join(BUGS)}")
    args = parser.parse_args(argv)
    chosen = [name for name in args.bugs.split(",") if name]
    unknown = [name for name in chosen if name not in BUGS]
    if unknown:
        parser.error(f"unknown bug {unknown[0]!r}: choose from {', '.join(BUGS)}")
    for name in chosen:
        BUGS[name][1]()
    info = {
        "implementation": "memfs_prompt with planted rule bugs (tests/planted_rules_impl.py)",
        "plantedBugs": {name: BUGS[name][0] for name in chosen},
    }
    return serve.main(resolve_profile(args.profile), info=info)


if __name__ == "__main__":
    sys.exit(main())
