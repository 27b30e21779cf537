"""A YAML syntax error as a person reads it: what is wrong on which line, and the likely fix, in plain words
instead of PyYAML's token names (`expected <block end>, but found '<block mapping start>'`).

Used for every YAML file the harness reads strictly (cases, expectations files: cases.load.parse_strict).
An error PyYAML reports that no rule here knows keeps its own words, after a plain prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml


@dataclass(frozen=True)
class PlainError:
    line: int | None  # 1-based; None when PyYAML gives no position
    message: str


def _line(mark: yaml.Mark | None) -> int | None:
    return mark.line + 1 if mark is not None else None


def _after_text(mark: yaml.Mark | None) -> bool:
    """Whether something other than indentation comes before `mark` on its line (PyYAML keeps the text)."""
    buffer = getattr(mark, "buffer", None)
    if mark is None or not isinstance(buffer, str):
        return False
    start = buffer.rfind("\n", 0, mark.pointer) + 1
    return bool(buffer[start : mark.pointer].strip(" -"))


def plain_yaml_error(error: yaml.YAMLError) -> PlainError:
    """The line to blame and the message for a YAML syntax error (a MarkedYAMLError, or any YAMLError)."""
    problem = str(getattr(error, "problem", None) or error)
    context = str(getattr(error, "context", None) or "")
    problem_mark, context_mark = getattr(error, "problem_mark", None), getattr(error, "context_mark", None)
    line, started = _line(problem_mark), _line(context_mark)
    quoted = problem.split("'")[1] if problem.count("'") >= 2 else ""  # the character PyYAML names, if any
    return _token_error(problem, context, quoted, line, started) or _structure_error(
        problem, context, line, _after_text(problem_mark)
    )


def _token_error(problem: str, context: str, quoted: str, line: int | None, started: int | None) -> PlainError | None:
    """A YAML syntax error about one token (a tab, a colon, a quote, an escape, a bracket, an alias), or None."""
    if "'\\t'" in problem or "tab character" in problem:
        return PlainError(line, "a tab character: YAML indents with spaces only; replace the tab with spaces")
    if "mapping values are not allowed" in problem:
        return PlainError(
            line,
            'a second `: ` on this line: quote the value (`key: "a: b"`), or, if this is a key '
            "of its own, give it its own line, indented as its siblings are",
        )
    if "could not find expected ':'" in problem:
        return PlainError(
            started or line,
            "this line is neither `key: value` nor part of the value above: add the "
            "`:` after the key, or indent the line under the key it belongs to",
        )
    if "quoted scalar" in context and "end of stream" in problem:
        return PlainError(started or line, "a quoted value is not closed: add its closing quote")
    if "unknown escape character" in problem:
        return PlainError(
            line,
            f"\\{quoted} is no escape in a "
            "\"double-quoted\" value: double the backslash (\\\\), or use 'single quotes'",
        )
    if "cannot start any token" in problem:
        char = quoted or "this character"
        return PlainError(line, f"a plain value cannot start with {char}: quote the value ('{char}...')")
    if "flow sequence" in context or "flow mapping" in context:
        bracket = "[" if "sequence" in context else "{"
        closing = "]" if bracket == "[" else "}"
        return PlainError(
            line,
            f"the `{bracket}` opened on line {started} is not closed before this: add `{closing}`, "
            "or quote a value that holds `,`, `:`, `[`, `]`, `{` or `}`",
        )
    if "undefined alias" in problem:
        return PlainError(line, f"`*{quoted}` reads as a YAML alias: quote the value ('*{quoted}')")
    return None


def _structure_error(problem: str, context: str, line: int | None, text_after: bool) -> PlainError:
    """A YAML syntax error about the document's structure (indentation, text after a value, block scalars)."""
    if "expected <block end>" in problem and text_after:
        return PlainError(
            line,
            "more text after a value's end (a closing quote, `]` or `}`) on this line: put it "
            "inside the quotes, or on a line of its own",
        )
    if "expected <block end>" in problem or "block collection" in context or "block mapping" in context:
        return PlainError(
            line,
            "this line's indentation does not fit the lines above it: indent it as its "
            "siblings are (the same number of spaces), or under the key it belongs to, and a list "
            "item (`- `) as the other items of its list",
        )
    if "alias" in context or "anchor" in context:
        return PlainError(line, "a plain value cannot start with `*` or `&` (YAML aliases and anchors): quote it")
    if "block scalar" in context:
        return PlainError(
            line,
            "after `|` or `>` only `-`, `+` or an indentation digit may follow on its line; "
            "start the text on the next line, indented",
        )
    if "expected a comment or a line break" in problem:
        return PlainError(
            line,
            "text after a value's end (a closing quote or `]`/`}`) on the same line: put it "
            "inside the quotes, or on a line of its own",
        )
    if "tag" in problem:
        return PlainError(line, "a `!tag`: tags are not used here; quote the value if `!` belongs to it")
    return PlainError(line, f"not valid YAML here ({context + ': ' if context else ''}{problem})")
