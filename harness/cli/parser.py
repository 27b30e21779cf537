"""The argument parser class of every `conformance` parser and subparser: options are spelt out in full, and
an unknown one is named with the nearest option of the command it was given to.

argparse takes any unambiguous prefix of a long option by default (`--imp python` read as `--impl`), so a
typo can silently become another option, and today's prefix becomes tomorrow's ambiguity. `Parser` turns that
off (allow_abbrev=False) for the top-level parser and, through add_subparsers (which makes subparsers of its
parser's class), for every command and sub-command; an unrecognized option is one error (exit 2) with
`did you mean --reference?`, and a command or choice that is not one with `did you mean 'run'?`
(harness.core.suggest).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from harness.core.suggest import nearest


class Parser(argparse.ArgumentParser):
    """argparse.ArgumentParser without abbreviations, whose unrecognized options get a suggestion."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chain = self.chosen(parsed)
            hints = [_hint(word, chain) for word in extras if word.startswith("-")]
            advice = "; ".join(hint for hint in hints if hint)
            chain[-1].error(f"unrecognized arguments: {' '.join(extras)}" + (f"; {advice}" if advice else ""))
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """A value outside an argument's choices (a command, `--runtime`): argparse's error, and the nearest
        choice."""
        if action.choices is not None and value not in action.choices:
            near = nearest(value, [str(choice) for choice in action.choices])
            choices = ", ".join(map(repr, action.choices))
            mean = f"; did you mean {near!r}?" if near else ""
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}{mean} (choose from {choices})")

    def chosen(self, parsed: argparse.Namespace) -> list[argparse.ArgumentParser]:
        """This parser and the (sub-)command parsers `parsed` went through, outermost first."""
        chain: list[argparse.ArgumentParser] = [self]
        while True:
            commands = [a for a in chain[-1]._actions if isinstance(a, argparse._SubParsersAction)]
            name = getattr(parsed, commands[0].dest, None) if commands and commands[0].dest else None
            if name is None or name not in commands[0].choices:
                return chain
            chain.append(commands[0].choices[name])


def _hint(word: str, chain: list[argparse.ArgumentParser]) -> str:
    """`did you mean --reference?` for an unknown option, from the options of the command it was given to."""
    name = word.split("=", 1)[0]
    options = [option for parser in reversed(chain) for option in parser._option_string_actions]
    near = nearest(name, options)
    return f"did you mean {near}?" if near and near != name else ""
