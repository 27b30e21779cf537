"""`conformance add-case DIR --id ID`: snapshot a memory repository as a scenario, then verify it rebuilds."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cases.write import CaseExists, model_size
from harness.cli.common import Commands
from harness.repo.snapshot import SnapshotError
from harness.tools.add_case import add_case, verify_case


def cmd_add_case(args: argparse.Namespace) -> int:
    memory_dir = Path(args.memory_dir)
    try:
        path, snapshot = add_case(memory_dir, args.id, Path(args.out), tags=args.tags, head_only=args.head_only)
    except (SnapshotError, CaseExists) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    files, size, commits = model_size(snapshot.model)
    print(f"wrote {path}: {commits} commit(s), {files} file(s), {size} bytes at HEAD")
    for note in snapshot.notes:
        print(f"  note: {note}")
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
    parser.add_argument("--head-only", action="store_true", help="only HEAD's tree, not the whole history")
    parser.add_argument("--out", default="cases/compile", help="directory to write ID.yaml into")
    parser.set_defaults(func=cmd_add_case)
