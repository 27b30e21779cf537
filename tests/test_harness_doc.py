"""docs/harness.md describes every module of harness/: its tree (the first code block) names each `.py` file
in its folder, and names none that does not exist, so the map a newcomer reads is the tree that is there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "harness"
DOC = ROOT / "docs" / "harness.md"
#: A tree entry is indented by two spaces per level; deeper lines continue the description of the entry above.
ENTRY_INDENT = 12
ENTRY = re.compile(r"^( +)((?:[\w]+\.py\b ?)+|[\w]+/)")


def tree_block(text: str) -> list[str]:
    """The lines of the first fenced code block (the tree of harness/)."""
    lines = text.splitlines()
    start = lines.index("```") if "```" in lines else next(i for i, line in enumerate(lines) if line.startswith("```"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    return lines[start + 1 : end]


def documented(text: str) -> set[str]:
    """The modules the tree names, as paths under harness/ (`runners/result_store/key.py`)."""
    folders: list[tuple[int, str]] = []  # (indent, folder) from the outermost
    found: set[str] = set()
    for line in tree_block(text):
        match = ENTRY.match(line)
        if match is None or len(match.group(1)) >= ENTRY_INDENT:
            continue
        indent, names = len(match.group(1)), match.group(2)
        while folders and folders[-1][0] >= indent:
            folders.pop()
        prefix = "".join(folder for _, folder in folders if folder != "harness/")
        if names.endswith("/"):
            folders.append((indent, names))
            continue
        found |= {prefix + name for name in names.split()}
    return found


def existing() -> set[str]:
    """Every module of harness/ (packages are their folders' lines: `__init__.py` is not listed)."""
    return {str(p.relative_to(HARNESS)) for p in HARNESS.rglob("*.py") if p.name != "__init__.py"}


def test_docs_harness_md_names_every_module_of_harness() -> None:
    missing = sorted(existing() - documented(DOC.read_text(encoding="utf-8")))
    assert missing == [], f"docs/harness.md does not describe these modules (add a line each): {missing}"


def test_docs_harness_md_names_no_module_that_does_not_exist() -> None:
    gone = sorted(documented(DOC.read_text(encoding="utf-8")) - existing())
    assert gone == [], f"docs/harness.md names modules that do not exist: {gone}"


def test_the_tree_reader_sees_folders_and_lists() -> None:
    text = "\n".join(
        [
            "```",
            "harness/",
            "  model.py          records",
            "  runners/",
            "    base.py         the interface",
            "                    continued.py is not an entry",
            "    store/",
            "      key.py        keys",
            "    wire.py jsonl.py  two at once",
            "  engine.py         the session",
            "```",
        ]
    )
    assert documented(text) == {
        "model.py",
        "runners/base.py",
        "runners/store/key.py",
        "runners/wire.py",
        "runners/jsonl.py",
        "engine.py",
    }
