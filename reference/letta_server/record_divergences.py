"""The one sentence per rule of docs/products.md that the server's product differences give as their reason.

This script once appended each entry of product-differences-VERSION.json to its case as a
`divergences:` entry for letta-server@VERSION (153 cases, then 39 more). Those entries have since
moved out of the corpus into expectations/letta-server-0.16.8.yaml (docs/expectations.md), which
`conformance expectations update REPORT --out expectations/letta-server-0.16.8.yaml` keeps true; so
running it now only says so. RULES stays: each reason there starts with `<rule>: <RULES[rule]>`.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# one sentence per rule of docs/products.md ("Product differences"), server first
RULES = {
    "system-required": "the server renders memory only when a system/ block exists "
    "(Memory._render_memory_blocks_git returns early); letta-code renders external files without one",
    "label-order": "the server orders siblings with sorted() (code points); letta-code with localeCompare (ICU)",
    "value-trailing-whitespace": "the server strips only trailing newlines from a value (rstrip('\\n')); "
    "letta-code trimEnd()s it",
    "body-leading-whitespace": "the server keeps the body after the frontmatter untrimmed "
    "(parse_block_markdown); letta-code trim()s it",
    "frontmatter-yaml-rejected": "the server's yaml.safe_load rejects this frontmatter, so the whole file is the "
    "value; letta-code's hand parser reads what lines it can",
    "frontmatter-fence-at-eof": "the server needs a closing fence followed by a newline (\\n---\\n); letta-code "
    "also closes at a final ---",
    "frontmatter-yaml-scalars": "the server reads frontmatter as YAML (quotes removed, block scalars folded, a "
    "leading U+FEFF ignored); letta-code's hand parser keeps quotes and folds its own way",
    "frontmatter-non-string": "a non-string description (a YAML bool or list) fails the server's pydantic Block "
    "validation, so reading the memory throws; letta-code takes the text",
    "bom": "the server does not drop a leading byte-order mark, so the frontmatter is not recognised; "
    "letta-code drops one",
    "nul-removed": "the server deletes U+0000 from block values (sanitize_value_null_bytes); letta-code keeps it",
    "strict-utf8-every-file": "the server decodes every tracked file strictly as UTF-8 (git show, text=True), "
    "Markdown or not, and throws on one that is not; letta-code reads only .md files, with U+FFFD",
    "unborn-head": "on an unborn HEAD the server's git ls-tree fails and the error propagates (thrown); "
    "letta-code compiles no files and no revision",
    "listing-trim": "the server strips only the ends of the whole listing, so a name with leading or trailing "
    "spaces survives; letta-code trims every listed path, so it vanishes",
    "dot-md-name": "the server turns a file named .md into the label of its directory; letta-code shows .md "
    "under the directory",
    "js-prototype-names": "letta-code's plain-object tree inherits Object.prototype, so names like constructor or "
    "__proto__ vanish, mix or throw (a letta-code bug); the server's dict treats them as ordinary names",
    "value-key-collision": "a path part __value__ collides with the leaf value on both sides: the server prints "
    "the dict's Python repr, letta-code [object Object]",
    "max-buffer": "letta-code drops a file (or the whole listing) over execFileSync's 1 MiB maxBuffer; the "
    "server has no limit",
    "memory-dir-is-repository": "the server's storage holds one repository whose root is the memory root, so a "
    "subdirectory has no blocks and no revision; letta-code's git finds the enclosing repository",
    "include-memfs": "the server has no includeMemfs switch: a git-backed agent's memory is always compiled",
    "git-show-work-tree": "letta-code runs git show HEAD:<path> in the memory directory's work tree, where an "
    "untracked or staged file named like the argument makes git refuse it or read it as a pathspec; the server "
    "runs it in a fresh download of .git, so only HEAD's tree counts",
    "python-datetime-range": "the server's recompile time is a Python datetime, which cannot hold this now "
    "(a day or hour JavaScript's Date rolls over, or an offset carrying the instant out of years 1-9999), so "
    "the server cannot compile (thrown); letta-code's Date accepts it",
    "strict-utf8-listing": "the server decodes git ls-tree's listing strictly as UTF-8 (text=True), so a name git "
    "prints raw (core.quotePath=false) that is not UTF-8 raises UnicodeDecodeError (thrown); letta-code decodes "
    "the listing with U+FFFD, and the decoded name's git show fails, so the file vanishes",
    "memfs-v2": "the server has no memfs-v2: a root MEMORY.md is an ordinary external file beside the system/ "
    "blocks (the v1 rendering); letta-code 0.33.3 and later render a repository with a root MEMORY.md by their "
    "v2 rules (root blocks, then <memory>)",
}


def main(argv: list[str] | None = None) -> int:
    print(
        "the server's product differences are in expectations/letta-server-0.16.8.yaml now: update it with "
        "`conformance expectations update REPORT --out expectations/letta-server-0.16.8.yaml` (docs/expectations.md)",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
