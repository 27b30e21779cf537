"""The Python port with one planted bug, made as a porter would make it: `python tests/planted_upstream_bug_impl.py
--bug NAME` copies memfs_prompt/ (and letta_profiles/) to a temporary directory, changes one line of the copy, and
runs its `serve` loop (the JSON-lines protocol, docs/protocol.md) from there. For `conformance upstream-tests`
(docs/upstream-tests.md): does one of upstream's own tests catch the bug?

- `midnight`: the metadata clock's hour without `|| 12` (`hours % 12`): midnight prints `00:00:00 AM` where
  upstream prints `12:00:00 AM` (upstream's compiler test asserts `2026-05-04 12:00:00 AM UTC+0000`);
- `body-rstrip`: the frontmatter body's `trim()` as Python's `rstrip()` (no leading whitespace removed, and
  Python's whitespace, not JavaScript's): no upstream test at v0.25.3, v0.25.9 or v0.30.28 catches it;
- `skills-first-line`: a skill's whole description instead of its first line in `<available_skills>`;
- `hook-read-only`: the legacy pre-commit hook's check of a file HEAD marks `read_only: true` compares with
  `"yes"`, so such a file may be changed (upstream's hook test `rejects modifying a read_only file` asserts the
  commit fails saying `read_only`; the `pre-commit-hook` target).

Its hello names the bug in `info.plantedBug`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUGS = {
    "midnight": [("jsvalues.py", "hour12 = hours % 12 or 12", "hour12 = hours % 12")],
    "body-rstrip": [
        (
            "frontmatter.py",
            "ParsedMarkdown(_parse_keys_v0_25(text), js_trim(body))",
            "ParsedMarkdown(_parse_keys_v0_25(text), body.rstrip())",
        ),
        ("frontmatter.py", "return ParsedMarkdown(keys, js_trim(body))", "return ParsedMarkdown(keys, body.rstrip())"),
    ],
    "skills-first-line": [("skills_block.py", 'js_trim(text).split("\\n")[0]', "js_trim(text)")],
    "hook-read-only": [
        (
            "commit_validation.py",
            'if head and _fm_value(head, "read_only") == "true":',
            'if head and _fm_value(head, "read_only") == "yes":',
        )
    ],
}


def planted_copy(bug: str, into: Path) -> Path:
    """memfs_prompt/ and letta_profiles/ copied under `into`, with `bug` planted (each change made exactly once)."""
    for package in ("memfs_prompt", "letta_profiles"):
        shutil.copytree(ROOT / package, into / package, ignore=shutil.ignore_patterns("__pycache__"))
    for file, old, new in BUGS[bug]:
        path = into / "memfs_prompt" / file
        text = path.read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise SystemExit(f"planted bug {bug}: {old!r} is not in memfs_prompt/{file} exactly once")
        path.write_text(text.replace(old, new), encoding="utf-8")
    return into


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tests/planted_upstream_bug_impl.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--bug", choices=sorted(BUGS), required=True)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="planted-port-") as directory:
        sys.path.insert(0, str(planted_copy(args.bug, Path(directory))))
        from memfs_prompt import serve
        from memfs_prompt.profiles import DEFAULT

        info = {"implementation": f"memfs_prompt with a planted bug ({args.bug})", "plantedBug": BUGS[args.bug]}
        return serve.main(DEFAULT, info=info)


if __name__ == "__main__":
    sys.exit(main())
