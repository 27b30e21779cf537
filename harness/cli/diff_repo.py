"""`conformance diff-repo DIR`: the implementation under test and one reference on an existing memory directory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cases.inputs import clock_error, parse_json_number
from harness.cases.load import DEFAULT_INPUTS
from harness.cli.common import (
    Commands,
    UsageError,
    add_impl,
    add_profile,
    add_reference,
    existing,
    impl_specs,
    reference_specs,
)
from harness.cli.impl_options import add_impl_env, impl_env
from harness.core.model import CompileRequest, Scenario, Status
from harness.repo.snapshot import repository_notes
from harness.run.corpus import RunOptions, open_session
from harness.runners.references import view_for
from harness.verdict.diff import render_field_diff
from harness.verdict.judge import judge


def _message_count(text: str) -> int | float:
    """`--previous-message-count` (harness.cases.inputs.parse_json_number), its refusal as argparse prints it."""
    try:
        return parse_json_number(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def request_of(args: argparse.Namespace) -> CompileRequest:
    """The compile request the options describe, every input checked first (UsageError)."""
    memory_dir = existing(Path(args.memory_dir), "memory directory").resolve()
    if not memory_dir.is_dir():
        raise UsageError(f"memory directory {memory_dir}: not a directory")
    if error := clock_error(args.now):
        raise UsageError(f"--now {args.now!r}: {error}")
    return CompileRequest(
        memory_dir=memory_dir,
        system=args.system,
        agent_id=args.agent_id,
        conversation_id=args.conversation_id,
        now=args.now,
        previous_message_count=args.previous_message_count,
        include_memfs=not args.no_memfs,
    )


def cmd_diff_repo(args: argparse.Namespace) -> int:
    spec = reference_specs(args)[0]
    impl = impl_specs(args)[0]
    request = request_of(args)
    memory_dir = request.memory_dir
    options = RunOptions([spec], implementations=[impl], profile_override=args.profile, impl_env=impl_env(args))
    with open_session(options) as session:
        print_repository_notes(memory_dir, session.git_env)
        session.start()
        ref = session.references[0]
        ref_outcome = ref.runner.compile(request)
        impl_outcome = session.impl(impl, ref.profile).compile(request)
    view = view_for(impl)
    scenario = Scenario("diff-repo", "an existing repository", memory_dir, (), {}, {})
    seen = view.apply(ref_outcome, impl_outcome)
    status, diffs, reasons = judge(scenario, ref.label, *seen, view.fields, impl_label=impl.label)
    if status in (Status.ERROR, Status.NOT_APPLICABLE):
        print(f"could not run: {'; '.join(reasons)}", file=sys.stderr)
        if ref_outcome.stderr:
            print(ref_outcome.stderr, file=sys.stderr)
        return 2
    if not diffs:
        print(f"identical: {impl.label} ({ref.profile}) and letta-code {ref.label} on {memory_dir}")
        return 0
    print(f"different: {impl.label} ({ref.profile}) vs letta-code {ref.label} on {memory_dir}")
    for diff in diffs:
        print(render_field_diff(diff))
    return 1


def print_repository_notes(memory_dir: Path, env: dict[str, str]) -> None:
    """On stderr, one line each, what the verdict does not say about the directory (repo.snapshot.repository_notes)."""
    for note in repository_notes(memory_dir, env):
        print(f"note: {note}", file=sys.stderr)


def add_request_options(parser: argparse.ArgumentParser) -> None:
    """The memory directory and the compile inputs (system prompt, ids, clock, message count, memfs)."""
    parser.add_argument("memory_dir", help="the memory directory (a git repository, or a directory inside one)")
    parser.add_argument(
        "--system", default=DEFAULT_INPUTS["system"], help="the raw system prompt, {CORE_MEMORY} where memory goes"
    )
    parser.add_argument("--agent-id", default=DEFAULT_INPUTS["agent_id"], help="default: %(default)s")
    parser.add_argument("--conversation-id", default=DEFAULT_INPUTS["conversation_id"], help="default: %(default)s")
    parser.add_argument(
        "--now",
        default=DEFAULT_INPUTS["now"],
        help="the clock the compile reads (compiledAt, the prompt's "
        "`last recompiled` line); default: the fixed %(default)s every case uses, not the time of day, "
        "so runs agree byte for byte",
    )
    parser.add_argument("--previous-message-count", type=_message_count, default=0, help="any finite JSON number")
    parser.add_argument("--no-memfs", action="store_true", help="includeMemfs: false")


def register(commands: Commands) -> None:
    diff = commands.add_parser(
        "diff-repo", help="compare the implementation under test and a reference on an existing repository"
    )
    add_request_options(diff)
    add_reference(diff, many=False)
    add_impl(diff, many=False)
    add_impl_env(diff)
    add_profile(diff)
    diff.set_defaults(func=cmd_diff_repo)
