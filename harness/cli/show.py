"""`conformance show DIR --reference R`: upstream's full output for a repository, for reading.

Prints one field of the reference's record (or, with --impl, the implementation under test's) in
full (default `content`, the system prompt the model would get), or with --json the whole record;
with --visible, invisible characters as named glyphs. Which side it prints, and under which profile,
is the first line on stderr (`side_line`), so stdout holds the value alone.
"""

from __future__ import annotations

import argparse
import json
import sys

from harness.cli.common import (
    Commands,
    add_impl,
    add_profile,
    add_reference,
    impl_specs,
    reference_specs,
)
from harness.cli.diff_repo import add_request_options, print_repository_notes, request_of
from harness.cli.impl_options import add_impl_env, impl_env
from harness.run.corpus import RunOptions, open_session
from harness.runners.implementations import DEFAULT
from harness.verdict.text import visible


def cmd_show(args: argparse.Namespace) -> int:
    spec = reference_specs(args)[0]
    impl = impl_specs(args)[0] if args.impl else None
    request = request_of(args)
    options = RunOptions(
        [spec], implementations=[impl or DEFAULT], profile_override=args.profile, impl_env=impl_env(args)
    )
    with open_session(options) as session:
        print_repository_notes(request.memory_dir, session.git_env)
        ref = session.references[0]
        print(side_line(spec.label, impl.label if impl else None, ref.profile, args), file=sys.stderr)
        if impl is None:
            session.start()
            outcome, who = ref.runner.compile(request), spec.label
        else:
            outcome, who = session.impl(impl, ref.profile).compile(request), impl.label
    if outcome.status in ("error", "unsupported"):
        print(f"error: {who} could not run: {outcome.error}", file=sys.stderr)
        if outcome.stderr:
            print(outcome.stderr, file=sys.stderr)
        return 2
    if outcome.status == "thrown":
        print(f"{who} threw: {outcome.thrown}")
        return 1
    record = outcome.record or {}
    if args.json:
        print(json.dumps(record, indent=1, ensure_ascii=False))
        return 0
    if args.field not in record:
        print(f"error: {who}'s record has no {args.field!r} (it has: {', '.join(record)})", file=sys.stderr)
        return 2
    value = record[args.field]
    text = value if isinstance(value, str) else json.dumps(value)
    sys.stdout.write(visible(text) if args.visible else text)
    if not text.endswith("\n"):
        sys.stdout.write("\n")
    return 0


def side_line(reference: str, impl: str | None, profile: str, args: argparse.Namespace) -> str:
    """What `show` prints: whose output (the reference's, or with --impl an implementation's) and which part."""
    what = "the record (--json)" if args.json else f"the field {args.field}" + (" (--visible)" if args.visible else "")
    if impl is None:
        return f"show: {what} of the reference {reference} (--impl SPEC shows an implementation's instead)"
    return f"show: {what} of the implementation {impl}, under {profile} (the profile of the reference {reference})"


def register(commands: Commands) -> None:
    show = commands.add_parser(
        "show", help="a reference's full output for a repository (or, with --impl, an implementation's), for reading"
    )
    add_request_options(show)
    add_reference(show, many=False)
    add_impl(
        show,
        many=False,
        text="print this implementation's output instead of the reference's",
        default="none: the reference's output",
    )
    add_impl_env(show)
    add_profile(show)
    show.add_argument("--field", default="content", help="which record field to print (default: content)")
    show.add_argument("--json", action="store_true", help="print the whole record as JSON")
    show.add_argument("--visible", action="store_true", help="invisible characters as named glyphs (CR, BOM, ...)")
    show.set_defaults(func=cmd_show)
