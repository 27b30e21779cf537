"""`conformance upstream-tests --git PATH[@REV] [--impl SPEC] [--target NAME]`: upstream's own tests of the modules
the suite can swap (the compiler, the skills block, the frontmatter parser and LocalBackend's prompt cache; the
pre-commit hook; ...: harness.tools.upstream.select.TARGETS), run by upstream's `bun test` against the
implementation under test (harness.tools.upstream.suite; docs/upstream-tests.md).

Exit 0 when no test fails and every revision ran; 1 otherwise; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from harness.acquire.releases import ReferenceUnavailable, ensure_bun
from harness.acquire.revision_source import BuildError
from harness.cli.common import (
    Commands,
    UsageError,
    add_impl,
    add_no_timing,
    add_profile,
    add_report,
    impl_specs,
    writing,
)
from harness.cli.impl_options import add_impl_env, impl_env
from harness.report.upstream_tests import UpstreamReport, terminal_lines
from harness.report.writers import UPSTREAM_TESTS, write_reports
from harness.runners.git_reference import GitReference, UnknownRevisionProfile, profile_of
from harness.tools.upstream.bridge import BridgeError, protocol_spec
from harness.tools.upstream.select import TARGETS
from harness.tools.upstream.suite import Options, run_upstream_tests


def references_of(args: argparse.Namespace) -> list[GitReference]:
    """Every `--git PATH[@REV]`, each resolved to a commit with a profile before anything runs."""
    references = []
    for text in args.git:
        try:
            reference = GitReference.parse(text if text.startswith("git:") else f"git:{text}")
        except ValueError as error:
            raise UsageError(str(error).replace("--reference", "--git")) from None
        if not reference.repo.expanduser().is_dir():
            raise UsageError(f"--git {text}: no such directory {reference.repo}")
        try:
            profile_of(reference, args.profile)
        except (BuildError, UnknownRevisionProfile, KeyError) as error:
            raise UsageError(f"--git {text}: {error}") from None
        references.append(reference)
    return references


def cmd_upstream_tests(args: argparse.Namespace) -> int:
    references = references_of(args)
    impl = impl_specs(args)[0]
    try:
        protocol_spec(impl)
    except BridgeError as error:
        raise UsageError(str(error)) from None
    try:
        bun = ensure_bun()
    except ReferenceUnavailable as error:
        raise UsageError(f"the pinned bun is unavailable: {error}") from None
    options = Options(
        targets=tuple(args.target or ()),
        timeout=args.timeout,
        file_timeout=args.file_timeout,
        test_timeout_ms=args.test_timeout,
        profile=args.profile,
        impl_env=impl_env(args),
    )
    started = time.time()
    progress = (lambda line: print(line, file=sys.stderr, flush=True)) if not args.quiet else (lambda _: None)
    run = run_upstream_tests(references, impl, options, bun, progress)
    run.command = ["conformance", *sys.argv[1:]]
    if args.report:
        with writing(args.report, "--report") as directory:
            write_reports(UpstreamReport(run, not args.no_timing, started), Path(directory), UPSTREAM_TESTS)
    for line in terminal_lines(run):
        print(line)
    counts = run.counts()
    return 1 if counts.failed or any(r.error for r in run.revisions) else 0


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "upstream-tests",
        help="upstream's own tests of the modules it can swap (the compiler, the pre-commit hook, ...) against "
        "the implementation under test",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--git",
        action="append",
        required=True,
        metavar="PATH[@REV]",
        help="a local clone of letta-code and a commit-ish (default HEAD); repeatable, one table per revision",
    )
    add_impl(parser, many=False)
    add_impl_env(parser)
    add_profile(parser)
    add_report(parser, UPSTREAM_TESTS)
    parser.add_argument(
        "--target",
        action="append",
        choices=[t.name for t in TARGETS],
        help="run only the test files of this swap target (repeatable; default: every target): "
        + "; ".join(f"{t.name}: {t.description}" for t in TARGETS),
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds the implementation may take per call")
    parser.add_argument("--file-timeout", type=float, default=600.0, help="seconds one `bun test FILE` may take")
    parser.add_argument(
        "--test-timeout", type=int, metavar="MS", help="bun's per-test timeout in both runs (default: bun's own)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    add_no_timing(parser)
    parser.set_defaults(func=cmd_upstream_tests)
