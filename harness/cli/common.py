"""Options shared by several `conformance` commands, each defined once, and the case selection they feed.

A command module calls these to declare its options, then parses arguments and calls the library.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from harness.cases.load import load_scenarios
from harness.model import Scenario, ScenarioError
from harness.runners.manifest import REFERENCE_FORMS, RUNTIMES, ReferenceSpec, default_reference

DEFAULT_CASES = Path("cases")

Commands = argparse._SubParsersAction  # type: ignore[type-arg]


def add_reference(parser: argparse.ArgumentParser, *, many: bool, default: str = "the pinned default") -> None:
    """`--reference`: one reference, or (many) a repeatable list of them."""
    if many:
        parser.add_argument("--reference", action="append", help=f"{REFERENCE_FORMS} (repeatable; default: {default})")
    else:
        parser.add_argument("--reference", help=f"{REFERENCE_FORMS} (default: {default})")


def add_profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", help="Python profile to compare with (default: the one matching each reference)")


def add_paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help="scenario files or directories (default: cases/)")


def add_select(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-k", help="only cases whose id or tags contain one of these comma-separated words")


def add_jobs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-j", "--jobs", type=jobs_count, default=1, help="cases at a time, each with its own references (N or auto)"
    )


def add_timeout(parser: argparse.ArgumentParser, default: float = 60.0) -> None:
    parser.add_argument("--timeout", type=float, default=default, help="seconds a reference may take per request")


def add_no_timing(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-timing", action="store_true", help="leave timings out of report.json (byte-identical reruns)"
    )


def add_report(parser: argparse.ArgumentParser, what: str = "index.html, report.json and junit.xml") -> None:
    parser.add_argument("--report", help=f"directory for {what}")


def add_runtime_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runtime", choices=RUNTIMES, help="run the references under bun (default) or node; "
        "a node reference is judged against the same release under bun, and where they differ the case is "
        "runtime-divergence, not a port failure",
    )  # fmt: skip
    parser.add_argument("--locale", help="LANG/LC_ALL for the reference process (node follows it; bun does not)")


def jobs_count(text: str) -> int:
    """`-j N` (N >= 1) or `-j auto` (one per core)."""
    if text == "auto":
        return os.cpu_count() or 1
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("-j takes a number of at least 1, or auto")
    return value


def reference_specs(args: argparse.Namespace) -> list[ReferenceSpec]:
    """The references a command named (`--reference`, one or many), or the pinned default."""
    given = args.reference if isinstance(args.reference, list) else [args.reference] if args.reference else []
    return [ReferenceSpec.parse(r) for r in (given or [default_reference()])]


def select(scenarios: list[Scenario], expression: str | None) -> list[Scenario]:
    """`-k`: keep cases whose id or a tag contains any of the comma-separated words."""
    if not expression:
        return scenarios
    words = [w.strip() for w in expression.split(",") if w.strip()]
    return [s for s in scenarios if any(w in s.id or w in s.tags for w in words)]


def load_selected(paths: list[Path], expression: str | None) -> tuple[list[Scenario], list[ScenarioError]]:
    """The cases under `paths` (default cases/) that `-k` keeps, and the files that did not load."""
    loaded = load_scenarios(paths or [DEFAULT_CASES])
    return select(loaded.scenarios, expression), loaded.errors
