"""`python -m memfs_prompt compile MEMORY_DIR --json ...` and `python -m memfs_prompt serve`: the port as a
command other tools call (one compile per process, or the JSON-lines protocol of docs/protocol.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from .compiler import compile_system_prompt
from .git_command import run_git
from .jsvalues import JsDate, UnsupportedJsValue, js_number, parse_js_date
from .profiles import DEFAULT, PROFILES, resolve_profile
from .render_v1 import UpstreamError
from .serve import main as serve_main

DEFAULT_AGENT_ID = "agent-conformance"
DEFAULT_CONVERSATION_ID = "conv-conformance"
DEFAULT_SYSTEM = "You are a helpful agent.\n\n{CORE_MEMORY}"


def parse_now(text: str) -> JsDate:
    """The compile clock as upstream gets it: `new Date(text)` (`jsvalues.parse_js_date`).

    An out-of-range value is a Date all the same (`2026-02-30` rolls over, `2026-01-32` is an Invalid
    Date, whose compile throws as upstream's does). A date-time without an offset is local time in
    JavaScript; the port takes it as UTC (the harness runs both sides with TZ=UTC). A string outside the
    ISO 8601 forms raises `UnsupportedJsValue` (a ValueError) saying so.
    """
    return parse_js_date(text)


def parse_js_number(text: str) -> float:
    """`--previous-message-count`: any JSON number (or NaN, Infinity), as the JS number upstream would hold."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (a JSON number such as 3, 3.0, -5 or 1e21)")
    return js_number(value)


def why_memory_is_empty(memory_dir: Path) -> str | None:
    """The reason upstream would silently compile no memory from `memory_dir`, or None."""
    if not memory_dir.exists():
        return f"{memory_dir} does not exist"
    if not memory_dir.is_dir():
        return f"{memory_dir} is not a directory"
    probe = run_git(memory_dir, None, "rev-parse", "--verify", "HEAD")
    if probe.returncode != 0:
        inside = run_git(memory_dir, None, "rev-parse", "--git-dir")
        if inside.returncode != 0:
            return f"{memory_dir} is not inside a git repository"
        return f"{memory_dir} is a git repository with no commits"
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m memfs_prompt", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    compile_cmd = commands.add_parser("compile", help="compile a memory repository's HEAD")
    compile_cmd.add_argument("memory_dir", metavar="MEMORY_DIR")
    compile_cmd.add_argument("--json", action="store_true", required=True, help="print the JSON record")
    compile_cmd.add_argument(
        "--profile", default=DEFAULT.name, help=f"one of {', '.join(PROFILES)} or letta-code@<release>"
    )
    compile_cmd.add_argument("--agent-id", default=DEFAULT_AGENT_ID)
    compile_cmd.add_argument("--conversation-id", default=DEFAULT_CONVERSATION_ID)
    system = compile_cmd.add_mutually_exclusive_group()
    system.add_argument("--system", help="raw system prompt text")
    system.add_argument(
        "--system-file",
        type=Path,
        help="file holding the raw system prompt (UTF-8, taken byte for byte: line ends are not translated)",
    )
    compile_cmd.add_argument("--now", help="compile clock, read as `new Date(NOW)` reads ISO 8601 (default: now)")
    compile_cmd.add_argument(
        "--previous-message-count", type=parse_js_number, default=0.0, help="any JSON number (default 0)"
    )
    compile_cmd.add_argument("--no-memfs", action="store_true", help="includeMemfs: false")
    serve_cmd = commands.add_parser(
        "serve", help="answer the conformance protocol's JSON-lines requests on stdin (docs/protocol.md)"
    )
    serve_cmd.add_argument(
        "--profile", default=DEFAULT.name, help=f"the profile of requests that name none (default {DEFAULT.name})"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        profile = resolve_profile(args.profile)
    except KeyError as error:
        parser.error(str(error.args[0]))
    if args.command == "serve":
        return serve_main(profile)
    try:
        now = parse_now(args.now) if args.now is not None else JsDate.from_datetime(datetime.now(UTC))
    except UnsupportedJsValue as error:
        parser.error(f"--now: {error}")
    if args.system_file is not None:
        try:
            system_text = args.system_file.read_bytes().decode("utf-8")  # byte for byte: CRLF stays CRLF
        except (OSError, UnicodeDecodeError) as error:
            parser.error(f"--system-file {args.system_file}: {error}")
    else:
        system_text = args.system if args.system is not None else DEFAULT_SYSTEM
    memory_dir = Path(os.path.abspath(args.memory_dir))
    try:
        record = compile_system_prompt(
            memory_dir,
            system=system_text,
            agent_id=args.agent_id,
            conversation_id=args.conversation_id,
            now=now,
            previous_message_count=args.previous_message_count,
            include_memfs=not args.no_memfs,
            profile=profile,
        )
    except UpstreamError as error:  # what upstream throws (an Invalid Date's toISOString, a __proto__ write)
        print(f"upstream throws: {error}", file=sys.stderr)
        return 1
    if not args.no_memfs and record.memfs_revision is None:  # asked only then: one git process less per compile
        reason = why_memory_is_empty(memory_dir)
        if reason:
            print(f"warning: {reason}; upstream compiles an empty memory here", file=sys.stderr)
    json.dump(record.to_json(), sys.stdout)
    sys.stdout.write("\n")
    return 0
