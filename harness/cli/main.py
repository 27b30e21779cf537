"""`conformance`: the argument parser (one module per command registers its own) and how an exception ends a
command (the exit codes themselves are cli.common's).

Every command module parses its arguments and calls the library; options several commands share
are defined once in cli.common.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from harness.cli import (
    add_case,
    bisect,
    cache,
    cases,
    compare_reports,
    determinism,
    diff_repo,
    drift,
    expectations,
    fuzz,
    history,
    list_cases,
    matrix,
    merge_reports,
    mutation,
    pin,
    reduce,
    run,
    show,
    upstream_tests,
)
from harness.cli.common import CRASH, USAGE, UsageError
from harness.cli.parser import Parser
from harness.core import stopping
from harness.runners.result_store import NO_CACHE_ENV

COMMANDS = (
    run,
    diff_repo,
    show,
    merge_reports,
    compare_reports,
    list_cases,
    add_case,
    reduce,
    fuzz,
    matrix,
    drift,
    bisect,
    mutation,
    determinism,
    pin,
    history,
    expectations,
    cache,
    upstream_tests,
    cases,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="conformance", description="Differential conformance harness for letta-code's memory compiler."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    stopping.reset()
    restore = stopping.install(watchdog=argv is None)  # SIGINT and SIGTERM stop the run (harness.core.stopping)
    no_cache = os.environ.get(NO_CACHE_ENV)
    if getattr(args, "no_cache", False):  # every session of the command, and its child processes, run everything
        os.environ[NO_CACHE_ENV] = "1"
    try:
        return int(args.func(args))
    except UsageError as error:  # checked before the first case runs: one error
        print(f"error: {error}", file=sys.stderr)
        return USAGE
    except BrokenPipeError:  # `conformance list | head`: the reader has had enough
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the interpreter's final flush does not fail again
        return 0
    except KeyboardInterrupt:  # a signal outside a run that stops itself: children killed, staging removed
        print("interrupted", file=sys.stderr)
        return stopping.exit_code()
    except Exception:  # anything else is a bug of the harness (or the machine): never passed off as usage
        traceback.print_exc()
        print("error: the harness crashed (the traceback above); this is not a usage error", file=sys.stderr)
        return CRASH
    finally:
        restore()
        stopping.reset()
        if no_cache is None:
            os.environ.pop(NO_CACHE_ENV, None)
        else:
            os.environ[NO_CACHE_ENV] = no_cache


if __name__ == "__main__":  # python -m harness.cli.main, as well as python -m harness.cli and conformance
    sys.exit(main())
