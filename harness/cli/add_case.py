"""`conformance add-case DIR --id ID`: snapshot a memory repository as a scenario, then verify it rebuilds."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from harness.cases.rules import Rule, corpus_rules, rules_path
from harness.cases.tags import TAGS
from harness.cases.write import CaseExists, model_size
from harness.cli.common import Commands, UsageError, cases_dir, existing
from harness.core.model import ScenarioError
from harness.core.plural import counted
from harness.core.suggest import nearest
from harness.repo.snapshot import SnapshotError
from harness.tools.add_case import add_case, verify_case

CASE_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")  # cases/schema.json's id pattern


def checked(args: argparse.Namespace) -> tuple[Path, Path]:
    """The memory directory and the output directory, every input checked before anything is written."""
    if not CASE_ID.fullmatch(args.id):
        suggestion = re.sub(r"[^a-z0-9._-]+", "-", args.id.lower()).strip("-._") or "my-case"
        raise UsageError(f"--id {args.id!r}: use lowercase letters, digits, '.', '_' and '-' (e.g. {suggestion})")
    unknown = [t for t in args.tags if t not in TAGS]
    if unknown:
        raise UsageError(f"--tags: unknown tag(s) {', '.join(unknown)}; known: {', '.join(sorted(TAGS))}")
    memory_dir = existing(Path(args.memory_dir), "memory directory")
    if not memory_dir.is_dir():
        raise UsageError(f"memory directory {memory_dir}: not a directory")
    out = Path(args.out) if args.out else cases_dir("compile", "--out DIR")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a directory")
    if (out / f"{args.id}.yaml").exists():
        raise UsageError(f"{out / f'{args.id}.yaml'} already exists; choose another --id (or remove the file)")
    known = corpus_rules_of(out)
    for rule in args.rules:
        if known is not None and rule not in known:
            guess = nearest(rule, known)
            hint = f"did you mean {guess}? " if guess else ""
            raise UsageError(
                f"--rules: {rule} is no rule of {rules_path(out.parent)}; {hint}`conformance list --rules` lists them"
            )
    return memory_dir, out


def corpus_rules_of(out: Path) -> dict[str, Rule] | None:
    """The rules of the corpus `out` (its compile/ folder) belongs to; None when it has no rules file."""
    try:
        return corpus_rules(out.parent)
    except ScenarioError as error:
        raise UsageError(f"--rules: {error}") from None


def cmd_add_case(args: argparse.Namespace) -> int:
    memory_dir, out = checked(args)
    try:
        path, snapshot = add_case(
            memory_dir, args.id, out, tags=args.tags, head_only=args.head_only, rules=tuple(args.rules)
        )
    except (SnapshotError, CaseExists) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    files, size, commits = model_size(snapshot.model)
    print(f"wrote {path}: {counted(commits, 'commit')}, {counted(files, 'file')}, {counted(size, 'byte')} at HEAD")
    for note in snapshot.notes:
        print(f"  note: {note}")
    if not args.rules and corpus_rules_of(out) is not None:  # every case of a corpus with rules names one
        print(
            f"  note: name the rules it pins: add `rules: [ID, ...]` to {path} (ids from "
            f"{rules_path(out.parent)}, `conformance list --rules`; docs/cases.md, Rules) or give --rules"
        )
    check = verify_case(path, memory_dir, snapshot.source_commits)
    if check.same_record:
        print("verified: the rebuilt repository compiles to the same record as the original (Python port)")
    else:
        print(f"rebuilt repository differs from the original in: {', '.join(check.differing_fields)}")
    if snapshot.model.kind == "git":
        print("commit ids: " + ("identical" if check.same_commit_ids else "rebuilt ids differ (see notes)"))
    only_revision = check.differing_fields == ["memfsRevision"] and not check.same_commit_ids and snapshot.notes
    return 0 if check.same_record or only_revision else 1


def register(commands: Commands) -> None:
    parser = commands.add_parser("add-case", help="write a scenario that rebuilds an existing memory repository")
    parser.add_argument("memory_dir", help="the memory directory (a git repository or a directory inside one)")
    parser.add_argument("--id", required=True, help="case id: lowercase [a-z0-9._-], becomes the file name")
    parser.add_argument("--tags", nargs="*", default=[], help="tags for the case (see docs/cases.md)")
    parser.add_argument(
        "--rules",
        nargs="*",
        default=[],
        metavar="ID",
        help="the rules of cases/rules.yaml the case pins (checked against the corpus's rules file)",
    )
    parser.add_argument("--head-only", action="store_true", help="only HEAD's tree, not the whole history")
    parser.add_argument(
        "--out", help="directory to write ID.yaml into (default: cases/compile in the current directory)"
    )
    parser.set_defaults(func=cmd_add_case)
