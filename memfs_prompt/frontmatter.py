"""Upstream's hand-written frontmatter parser (`src/utils/frontmatter.ts`), one dialect per release line.

Only what the compiler reads matters (the `description` key and the body), but the
parser is ported whole so that every key's effect on later keys is the same.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from .quirks import js_trim, js_trim_start

FrontmatterValue = str | list[str]


class Dialect(enum.Enum):
    """Which release's parser: named after the first release that shipped it."""

    V0_25 = "0.25.3"  # needs a non-empty frontmatter and a non-empty body; arrays only
    V0_30 = "0.30.28"  # body optional, empty frontmatter allowed, bare key -> ""
    V0_31 = "0.31.12"  # indented lines only count as list items (indent <= 2)
    V0_32_17 = "0.32.17"  # adds YAML block scalars (| and >, with chomping)


@dataclass
class ParsedMarkdown:
    frontmatter: dict[str, FrontmatterValue] = field(default_factory=dict)
    body: str = ""


def normalize_newlines(content: str) -> str:
    """Strip one leading BOM, then CRLF -> LF, then lone CR -> LF (as upstream does before matching)."""
    if content.startswith("\ufeff"):
        content = content[1:]
    return content.replace("\r\n", "\n").replace("\r", "\n")


# JS regexes without the m flag: `$` is the end of input, hence \Z (Python's `$` also matches before a final \n).
_OLD_FRONTMATTER = re.compile(r"---\n([\s\S]*?)\n---\n([\s\S]*)\Z")
_NEW_FRONTMATTER = re.compile(r"---\n([\s\S]*?)\n---(?:\n([\s\S]*))?\Z")
_BLOCK_SCALAR = re.compile(r"([|>])([+-]?)\Z")


def _js_store(frontmatter: dict[str, FrontmatterValue], key: str, value: FrontmatterValue) -> None:
    # Assigning `obj["__proto__"]` on a plain object never creates an own property.
    if key != "__proto__":
        frontmatter[key] = value


def parse_frontmatter(content: str, dialect: Dialect) -> ParsedMarkdown:
    normalized = normalize_newlines(content)
    if dialect is Dialect.V0_25:
        match = _OLD_FRONTMATTER.match(normalized)
        if not match or not match.group(1) or not match.group(2):
            return ParsedMarkdown({}, normalized)
        text, body = match.group(1), match.group(2)
        return ParsedMarkdown(_parse_keys_v0_25(text), js_trim(body))
    match = _NEW_FRONTMATTER.match(normalized)
    if not match:
        return ParsedMarkdown({}, normalized)
    text, body = match.group(1), match.group(2) or ""
    if dialect is Dialect.V0_30:
        keys = _parse_keys_v0_30(text)
    else:
        keys = _parse_keys_indented(text, block_scalars=dialect is Dialect.V0_32_17)
    return ParsedMarkdown(keys, js_trim(body))


def _parse_keys_v0_25(text: str) -> dict[str, FrontmatterValue]:
    frontmatter: dict[str, FrontmatterValue] = {}
    current_key: str | None = None
    current_array: list[str] = []
    for line in text.split("\n"):
        if js_trim(line).startswith("-") and current_key:
            current_array.append(js_trim(js_trim(line)[1:]))
            continue
        if current_key and current_array:
            _js_store(frontmatter, current_key, current_array)
            current_key, current_array = None, []
        colon = line.find(":")
        if colon > 0:
            key = js_trim(line[:colon])
            value = js_trim(line[colon + 1 :])
            current_key = key
            if value:
                _js_store(frontmatter, key, value)
                current_key = None
            else:
                current_array = []
    if current_key and current_array:
        _js_store(frontmatter, current_key, current_array)
    return frontmatter


class _PendingKey:
    """The `savePendingKey` closure of 0.30.28+: a bare `key:` becomes "" unless list items follow."""

    def __init__(self, frontmatter: dict[str, FrontmatterValue]) -> None:
        self.frontmatter = frontmatter
        self.key: str | None = None
        self.items: list[str] = []

    def save(self) -> None:
        if not self.key:
            return
        _js_store(self.frontmatter, self.key, self.items if self.items else "")
        self.key, self.items = None, []


def _parse_keys_v0_30(text: str) -> dict[str, FrontmatterValue]:
    frontmatter: dict[str, FrontmatterValue] = {}
    pending = _PendingKey(frontmatter)
    for line in text.split("\n"):
        if js_trim(line).startswith("-") and pending.key:
            pending.items.append(js_trim(js_trim(line)[1:]))
            continue
        pending.save()
        _read_key_line(line, frontmatter, pending)
    pending.save()
    return frontmatter


def _read_key_line(line: str, frontmatter: dict[str, FrontmatterValue], pending: _PendingKey) -> None:
    colon = line.find(":")
    if colon > 0:
        key = js_trim(line[:colon])
        value = js_trim(line[colon + 1 :])
        if value:
            _js_store(frontmatter, key, value)
        else:
            pending.key, pending.items = key, []


def _indentation(line: str) -> int:
    return len(line) - len(js_trim_start(line))


def _parse_keys_indented(text: str, *, block_scalars: bool) -> dict[str, FrontmatterValue]:
    frontmatter: dict[str, FrontmatterValue] = {}
    pending = _PendingKey(frontmatter)
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        trimmed = js_trim(line)
        indentation = _indentation(line)
        if indentation > 0:
            if indentation <= 2 and trimmed.startswith("-") and pending.key:
                pending.items.append(js_trim(trimmed[1:]))
            index += 1
            continue
        pending.save()
        colon = line.find(":")
        if colon > 0 and block_scalars:
            key = js_trim(line[:colon])
            value = js_trim(line[colon + 1 :])
            scalar = _BLOCK_SCALAR.match(value)
            if scalar:
                block: list[str] = []
                cursor = index + 1
                while cursor < len(lines):
                    candidate = lines[cursor]
                    if js_trim(candidate) and candidate == js_trim_start(candidate):
                        break
                    block.append(candidate)
                    cursor += 1
                _js_store(frontmatter, key, parse_block_scalar(block, scalar.group(1), scalar.group(2)))
                index = cursor
                continue
        _read_key_line(line, frontmatter, pending)
        index += 1
    pending.save()
    return frontmatter


def parse_block_scalar(lines: list[str], style: str, chomping: str) -> str:
    """Upstream `parseBlockScalar` (0.32.17+): a simplified YAML literal/folded scalar."""
    indents = [_indentation(line) for line in lines if js_trim(line)]
    content_indent = min(indents) if indents else None
    deindented = [line[content_indent:] if js_trim(line) and content_indent is not None else "" for line in lines]
    if style == "|":
        value = "\n".join(deindented)
    else:
        pending_breaks = 0
        value = ""
        for line in deindented:
            if not line:
                pending_breaks += 1
                continue
            if value:
                value += "\n" * pending_breaks if pending_breaks > 0 else " "
            elif pending_breaks > 0:
                value += "\n" * pending_breaks
            value += line
            pending_breaks = 0
        value += "\n" * pending_breaks
    if chomping == "+":
        return value + "\n"
    stripped = re.sub(r"\n+\Z", "", value)
    return stripped if chomping == "-" else stripped + "\n"
