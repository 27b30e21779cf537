"""`conformance cases export DIR`: the corpus that ships with the tool, written out to read or extend.

The corpus is the tool's own (harness.core.locations.project_cases): compile/, lifecycle/ and rules.yaml beside
them, every YAML file byte for byte, nothing else (no package file). DIR must be new or empty, so an export
never mixes with or overwrites someone's cases. Run from DIR's parent with DIR named `cases`, every command
reads and writes the exported corpus as it does a checkout's (harness.core.locations.default_cases).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from harness.cases.rules import CASE_FOLDERS
from harness.cli.common import Commands, UsageError, writing
from harness.core.locations import project_cases


def corpus_files(root: Path) -> list[Path]:
    """The corpus under `root`, relative to it, in a stable order: every YAML file, in any folder."""
    return sorted(path.relative_to(root) for path in root.rglob("*.yaml") if path.is_file())


def export_corpus(source: Path, dest: Path) -> list[Path]:
    """Copy the corpus under `source` into `dest` (new or empty), keeping its folders; the files written."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        what = "is not a directory" if not dest.is_dir() else "is not empty"
        raise UsageError(f"cases export {dest}: it {what}; give a new or empty directory (the corpus is written whole)")
    files = corpus_files(source)
    with writing(dest, "cases export"):
        for relative in files:
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / relative, target)
    return files


def cmd_export(args: argparse.Namespace) -> int:
    files = export_corpus(project_cases(), args.dir)
    kinds = {folder: sum(1 for f in files if f.parts[0] == folder) for folder in CASE_FOLDERS}
    others = [str(f) for f in files if f.parts[0] not in kinds]
    print(
        f"wrote {kinds['compile']} compile cases, {kinds['lifecycle']} lifecycle probes, {kinds['ops']} op cases"
        + (f" and {', '.join(others)}" if others else "")
        + f" to {args.dir}"
    )
    print(
        f"run them: conformance run {args.dir} --impl SPEC"
        + (f" (or from {args.dir.parent} with no path: ./cases comes first)" if args.dir.name == "cases" else "")
    )
    return 0


def register(commands: Commands) -> None:
    cases = commands.add_parser("cases", help="the corpus that ships with the tool")
    actions = cases.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write the corpus (compile/, lifecycle/, rules.yaml) into a new DIR")
    export.add_argument("dir", type=Path, metavar="DIR", help="a new or empty directory")
    export.set_defaults(func=cmd_export)
