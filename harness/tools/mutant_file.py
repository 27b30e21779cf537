"""The mutant file format (mutants/*.yaml) and its loading: what a mutant is (`Mutant`), and every check a file
gets before any baseline work, each refusal naming the file and line.

A mutant file is a mapping with one key, `mutants`: a list of entries, each with `id`, `file` (a path under
memfs_prompt/), `original` (a snippet that occurs in that file exactly once), `replacement`, `why`, and
optionally one of `equivalent` or `known_survivor` (the reason) and `tests` (pytest node ids under tests/).
The format is documented in docs/reliability.md ("Mutant files"); it is read with the corpus's strict YAML
(harness.cases.load.parse_strict: no aliases, no duplicate keys) and checked against `SCHEMA`
(harness.cases.schemacheck.validate), then each entry's file and snippet against the package it mutates.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cases.schemacheck import validate
from harness.cases.strict import parse_strict, read_utf8
from harness.cases.yamlnodes import line_at
from harness.core.model import ScenarioError

PACKAGE = "memfs_prompt"

_TEXT = {"type": "string", "minLength": 1}
#: The JSON Schema of a mutant file.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["mutants"],
    "additionalProperties": False,
    "properties": {
        "mutants": {
            "type": "array",
            "description": "the mutants, each applied alone to a copy of memfs_prompt/",
            "items": {
                "type": "object",
                "required": ["id", "file", "original", "replacement", "why"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9.-]*$", "description": "unique across files"},
                    "file": {"type": "string", "pattern": r"^[^/\\].*\.py$", "description": "under memfs_prompt/"},
                    "original": {**_TEXT, "description": "a snippet that occurs in `file` exactly once"},
                    "replacement": {"type": "string", "description": "what the snippet becomes"},
                    "why": {**_TEXT, "description": "the upstream behaviour the mutant removes"},
                    "equivalent": {**_TEXT, "description": "why no case can tell it apart (not scored)"},
                    "known_survivor": {**_TEXT, "description": "why it survives for now (scored as survived)"},
                    "tests": {
                        "type": "array",
                        "items": {"type": "string", "pattern": "^tests/[^:]+\\.py(::.+)?$"},
                        "description": "pytest node ids under tests/ run against the mutated copy before the corpus",
                    },
                },
            },
        }
    },
}
SCHEMA_NAME = "harness/tools/mutant_file.py (SCHEMA)"
_SHAPE = 'a mutant file is a mapping with one key, `mutants:`, a list of mutants (docs/reliability.md, "Mutant files")'


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str  # relative to memfs_prompt/
    original: str
    replacement: str
    why: str
    equivalent: str | None = None  # why no case can tell it apart, when that is the case
    known_survivor: str | None = None  # why it survives for now (no honest case can pin it yet)
    tests: tuple[str, ...] = ()  # pytest node ids that kill it where no case can reach it (run before the corpus)

    def apply(self, package_dir: Path) -> None:
        """Rewrite the file in package_dir; the snippet must occur exactly once."""
        path = package_dir / self.file
        text = path.read_text(encoding="utf-8")
        count = text.count(self.original)
        if count != 1:
            raise ValueError(
                f"mutant {self.id}: the original snippet occurs {count} times in {PACKAGE}/{self.file} "
                "(it must occur once); update the mutant to the current source"
            )
        path.write_text(text.replace(self.original, self.replacement), encoding="utf-8")


def mutant_files(paths: list[Path]) -> list[Path]:
    """The mutant files `--mutants` names: a file as it is, a directory as its *.yaml files (sorted)."""
    return [f for p in paths for f in (sorted(p.glob("*.yaml")) if p.is_dir() else [p])]


def load_mutants(paths: Path | list[Path], package: Path) -> list[Mutant]:
    """Every mutant of these files (or directories), in order, each checked against `package` (the unmutated
    memfs_prompt/): its file exists there and holds its snippet once. An id may be used once across all files.
    Raises ScenarioError (file, line, fix) at the first problem."""
    mutants: list[Mutant] = []
    seen: dict[str, str] = {}
    for path in mutant_files(paths if isinstance(paths, list) else [paths]):
        mutants += _load_file(path, seen, package)
    return mutants


def _load_file(path: Path, seen: dict[str, str], package: Path) -> list[Mutant]:
    root, data = parse_strict(read_utf8(path), path, what="mutant files")
    if root is None:
        raise ScenarioError(path, None, f"the mutant file is empty; {_SHAPE}")
    if not isinstance(data, dict):
        raise ScenarioError(path, root.start_mark.line + 1, f"a {type(data).__name__} at the top level; {_SHAPE}")
    validate(path, root, data, SCHEMA, SCHEMA_NAME)
    sources: dict[str, str] = {}
    mutants = []
    for index, entry in enumerate(data["mutants"]):
        line = line_at(root, ["mutants", index])
        if entry["id"] in seen:
            raise ScenarioError(
                path, line, f"mutant id {entry['id']!r} is already used ({seen[entry['id']]}); give this one another id"
            )
        seen[entry["id"]] = f"{path}:{line}"
        if "equivalent" in entry and "known_survivor" in entry:
            raise ScenarioError(
                path,
                line_at(root, ["mutants", index, "known_survivor"]),
                f"mutant {entry['id']!r} is listed as equivalent and as a known survivor; keep one "
                "(equivalent: no case can tell it apart; known_survivor: one could, none does yet)",
            )
        source = package / entry["file"]
        if entry["file"] not in sources:
            if not source.is_file():
                raise ScenarioError(
                    path,
                    line_at(root, ["mutants", index, "file"]),
                    f"mutant {entry['id']!r}: {PACKAGE}/{entry['file']} does not exist; name a file under {PACKAGE}/",
                )
            sources[entry["file"]] = source.read_text(encoding="utf-8")
        count = sources[entry["file"]].count(entry["original"])
        if count != 1:
            raise ScenarioError(
                path,
                line_at(root, ["mutants", index, "original"]),
                f"mutant {entry['id']!r}: its original occurs {count} times in {PACKAGE}/"
                f"{entry['file']} (it must occur once); copy the snippet from the current source"
                + (", with enough around it to be unique" if count else ""),
            )
        mutants.append(
            Mutant(
                entry["id"],
                entry["file"],
                entry["original"],
                entry["replacement"],
                entry["why"],
                entry.get("equivalent"),
                entry.get("known_survivor"),
                tuple(entry.get("tests", ())),
            )
        )
    return mutants
