"""Options shared by several `conformance` commands, each defined once, the case selection they feed, and the
exit codes.

A command module calls these to declare its options, then parses arguments and calls the library.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.acquire.releases import cache_root
from harness.acquire.revision_source import BuildError
from harness.cases.load import load_scenarios
from harness.cases.memo import ScenarioMemo
from harness.cases.select import Keyword
from harness.core.locations import LOCAL_CASES, default_cases, project_cases
from harness.core.model import Scenario, ScenarioError
from harness.core.reference import REFERENCE_FORMS, RUNTIMES, ReferenceSpec, default_reference, unpinned
from harness.core.suggest import nearest
from harness.report.writers import RUN, files_text
from harness.runners.implementations import IMPL_FORMS, ImplSpec
from harness.runners.references import profile_for_reference
from letta_profiles import PROFILE_NAMES, PUBLISHED, resolve_profile_name

CASES = LOCAL_CASES  # the current directory's: commands write cases only there (cases_dir)
PROJECT_CASES = project_cases()  # the tool's corpus (harness.core.locations): read when there is no ./cases


#: Every exit code of `conformance`, here and nowhere else (stopping.exit_code adds 130 and 143 for a stopped run).
OK = 0  # every result passed (or is known)
FAILED = 1  # a result failed, a file did not load, a gate or check failed
USAGE = 2  # a UsageError: a wrong input, one message
CRASH = 3  # anything else raised: a harness bug, with its traceback


def exit_code(ok: bool) -> int:
    """A finished command's exit code: OK when everything it judged passed, else FAILED."""
    return OK if ok else FAILED


class UsageError(Exception):
    """A wrong input found before anything runs: one message, exit USAGE (cli.main)."""


Commands = argparse._SubParsersAction  # type: ignore[type-arg]


def add_reference(parser: argparse.ArgumentParser, *, many: bool, default: str = "the pinned default") -> None:
    """`--reference`: one reference, or (many) a repeatable list of them."""
    if many:
        parser.add_argument("--reference", action="append", help=f"{REFERENCE_FORMS} (repeatable; default: {default})")
    else:
        parser.add_argument("--reference", help=f"{REFERENCE_FORMS} (default: {default})")


def add_profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile", help="the profile implementations are compared under (default: the one matching each reference)"
    )


def add_impl(
    parser: argparse.ArgumentParser, *, many: bool, text: str = "the implementation under test", default: str = "python"
) -> None:
    """`--impl`: the implementation under test (docs/protocol.md), or (many) a repeatable list of them; `text`
    and `default` say what it does for the command and what the command does without it."""
    text = f"{text}: {IMPL_FORMS}"
    if many:
        parser.add_argument("--impl", action="append", metavar="SPEC", help=f"{text} (repeatable; default: {default})")
    else:
        parser.add_argument("--impl", metavar="SPEC", help=f"{text} (default: {default})")


def add_expectations(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--expectations",
        action="append",
        type=Path,
        metavar="FILE",
        help="an implementation's known failures (YAML, docs/protocol.md); repeatable, one file per implementation",
    )


def add_paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help="scenario files or directories (default: cases/)")


def add_select(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-k",
        type=keyword,
        help="pytest's -k: `bom and not crlf`, `(quirk or golden) and not lifecycle`; a word "
        "matches part of a case's id, tag, file or folder name, in any case; commas mean or (harness/cases/select.py)",
    )


def keyword(text: str) -> Keyword:
    try:
        return Keyword(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_run_control(parser: argparse.ArgumentParser) -> None:
    """-x, --maxfail, --lf, --durations: how much of a run to do and what to say at its end."""
    parser.add_argument(
        "-x", "--exitfirst", action="store_true", help="stop after the first failing result or file that did not load"
    )
    parser.add_argument("--maxfail", type=positive, help="stop after N failing results (each load error counts)")
    parser.add_argument(
        "--lf",
        "--last-failed",
        action="store_true",
        dest="last_failed",
        help="only the cases that failed in the previous report (--report DIR's report.json); their new results "
        "replace theirs in that report and every other result stays, so DIR keeps the whole run",
    )
    parser.add_argument("--durations", type=natural, metavar="N", help="list the N slowest results (0: all)")


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: give a number of at least 1")
    return value


def natural(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: give a number of at least 0")
    return value


def maxfail(args: argparse.Namespace) -> int | None:
    """How many failing results stop a run (-x is 1), None for no limit."""
    return 1 if getattr(args, "exitfirst", False) else getattr(args, "maxfail", None)


def add_jobs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-j", "--jobs", type=jobs_count, default=1, help="cases at a time, each with its own references (N or auto)"
    )


def add_timeout(parser: argparse.ArgumentParser, default: float = 60.0) -> None:
    parser.add_argument("--timeout", type=float, default=default, help="seconds a reference may take per request")


def add_run_timeout(parser: argparse.ArgumentParser) -> None:
    """`--run-timeout SECONDS`: the whole run's deadline (harness.core.stopping), beside --timeout's per request."""
    parser.add_argument(
        "--run-timeout",
        type=seconds,
        metavar="SECONDS",
        help="stop the whole run after SECONDS, as SIGTERM would: a partial report marked interrupted, exit 143",
    )


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: give a number of seconds (30, 1.5)") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: give a number of seconds above 0")
    return value


def add_no_timing(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-timing", action="store_true", help="leave timings out of report.json (byte-identical reruns)"
    )


def add_no_cache(parser: argparse.ArgumentParser) -> None:
    """`--no-cache`: every reference request runs; the result store is neither read nor written (cli.main sets
    LETTA_CONFORMANCE_NO_CACHE for the command, so every session it opens, and its child processes, obey)."""
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="run every reference request: do not read or write the result store (docs/scale.md)",
    )


def add_report(parser: argparse.ArgumentParser, kind: str = RUN) -> None:
    """`--report DIR`, its help naming the files a report of `kind` holds (harness.report.writers)."""
    parser.add_argument("--report", help=f"directory for {files_text(kind)}")


def add_runtime_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runtime",
        choices=RUNTIMES,
        help="run the references under bun (default) or node; "
        "a node reference is judged against the same release under bun, and where they differ the case is "
        "runtime-divergence, not a port failure",
    )
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
    """The references a command named (`--reference`, one or many), or the pinned default, each checked
    before anything runs (check_reference, then `--profile`, then check_profile)."""
    given = args.reference if isinstance(args.reference, list) else [args.reference] if args.reference else []
    override = getattr(args, "profile", None)
    specs = []
    for text in given or [default_reference()]:
        try:
            spec = ReferenceSpec.parse(text)
        except ValueError as error:
            raise UsageError(str(error)) from None
        check_reference(spec, text)
        specs.append(spec)
    if override:
        try:
            resolve_profile_name(override)
        except KeyError as error:
            raise UsageError(f"--profile: {error.args[0]}{profile_hint(override)}") from None
    for spec in specs:
        check_profile(spec, override)
    return specs


def impl_specs(args: argparse.Namespace) -> list[ImplSpec]:
    """The implementations under test a command named (`--impl`, one or many), default `python`; a `cmd:`
    program must be found on PATH or as a file."""
    given = args.impl if isinstance(args.impl, list) else [args.impl] if getattr(args, "impl", None) else []
    specs = []
    for text in given or ["python"]:
        try:
            spec = ImplSpec.parse(text)
        except ValueError as error:
            raise UsageError(str(error)) from None
        if spec.kind == "cmd":
            program = spec.argv[0]
            if not shutil.which(program) and not Path(program).is_file():
                raise UsageError(f"--impl {text}: no program {program!r} on PATH or in {Path.cwd()}")
        specs.append(spec)
    return list(dict.fromkeys(specs))


def check_profile(spec: ReferenceSpec, override: str | None) -> None:
    """The reference is judged with some profile (runners.references.profile_for_reference): a release
    version no profile maps, a git revision without one, a git: path that is no clone are UsageErrors."""
    try:
        profile_for_reference(spec, override)
    except ValueError as error:  # the message names the reference and the fix
        raise UsageError(str(error)) from None
    except BuildError as error:  # git could not read the clone or the revision
        raise UsageError(f"--reference {spec.cli}: {error}") from None
    except KeyError as error:  # git:PATH@REV#PROFILE naming no profile
        named = override or spec.value.partition("#")[2]
        raise UsageError(f"--reference {spec.cli}: {error.args[0]}{profile_hint(named)}") from None


def profile_hint(name: str) -> str:
    """`; did you mean letta-code@0.33.6?` for a profile name resolve_profile_name refused: the nearest of the
    profile names and `letta-code@RELEASE` for every published release (harness.core.suggest, newest first)."""
    names = [*reversed(PROFILE_NAMES), *(f"letta-code@{release}" for release in reversed(PUBLISHED))]
    near = nearest(name, names)
    return f"; did you mean {near}?" if near else ""


def check_reference(spec: ReferenceSpec, text: str) -> None:
    """A release must be pinned (or accepted for this run), a bundle must be a file, a checkout a directory."""
    if problem := unpinned(spec, text):
        raise UsageError(f"--reference {text}: {problem}")
    path = Path(spec.value).expanduser()
    if spec.kind == "bundle" and not path.is_file():
        raise UsageError(f"--reference {text}: no such bundle file {path}")
    if spec.kind == "checkout" and not (path / "package.json").is_file():
        raise UsageError(f"--reference {text}: {path} is not a letta-code checkout (no package.json)")


@contextmanager
def writing(path: str | Path, what: str) -> Iterator[Path]:
    """Writing into a file or directory the command line named (`--report DIR`, `--out DIR`): an OSError
    there (a file where the directory should be, no permission, a full disk) is one UsageError naming
    the option and the path (exit 2), not a crash."""
    try:
        yield Path(path)
    except OSError as error:
        raise UsageError(f"{what} {path}: cannot write there ({error.strerror or error})") from None


def existing(path: Path, what: str) -> Path:
    """`path` when it exists, else one UsageError naming it."""
    if not path.exists():
        raise UsageError(f"{what} {path}: no such file or directory")
    return path


def cases_dir(kind: str | None, instead: str) -> Path:
    """Where a command writes cases when it is not told: the current directory's cases/ (its `kind` folder,
    compile or lifecycle, when given), for every command alike; without one, a UsageError asking for `instead`
    (`--out DIR`) or for a corpus of one's own. The corpus installed with the tool is never written."""
    if not CASES.is_dir():
        raise UsageError(
            f"no cases/ in {Path.cwd()}: give {instead}, or write the corpus out to extend it "
            f"(`conformance cases export cases`) and run from the directory holding cases/"
        )
    return CASES / kind if kind else CASES


def case_paths(paths: list[Path]) -> list[Path]:
    """The scenario paths a command reads: the ones given (each must exist), else harness.core.locations.default_cases
    (./cases, or the corpus installed with the tool, which a note on stderr names)."""
    if paths:
        return [existing(p, "scenario path") for p in paths]
    corpus = default_cases()
    if corpus != CASES:
        print(f"no cases/ here: reading the tool's corpus, {corpus}", file=sys.stderr)
    return [corpus]


def select(scenarios: list[Scenario], expression: Keyword | str | None) -> list[Scenario]:
    """`-k`: keep cases whose id and tags satisfy the expression."""
    if not expression:
        return scenarios
    return (expression if isinstance(expression, Keyword) else Keyword(expression)).select(scenarios)


def rules_of(scenarios: list[Scenario]) -> dict[str, Any]:
    """The rules of the corpus the cases come from (harness.cases.rules.rules_of_cases); none: no rules, so no case
    needs a feature. Cases of several corpora with rules, or a bad rules file, are a UsageError."""
    from harness.cases.rules import rules_of_cases

    try:
        return dict(rules_of_cases(scenarios) or {})
    except ValueError as error:
        raise UsageError(f"rules: {error}; run one corpus at a time") from None
    except ScenarioError as error:
        raise UsageError(f"rules: {error}") from None


def load_selected(paths: list[Path], expression: Keyword | str | None) -> tuple[list[Scenario], list[ScenarioError]]:
    """The cases under `paths` (default cases/) that `-k` keeps, and the files that did not load."""
    loaded = load_scenarios(case_paths(paths), ScenarioMemo(cache_root() / "scenarios"))
    return select(loaded.scenarios, expression), loaded.errors
