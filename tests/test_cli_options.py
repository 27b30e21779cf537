"""Options are spelt out in full on every parser and subparser, and a misspelt option, reference or profile
is named with the nearest right one (issue 37)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from harness.cli.main import build_parser, main
from harness.cli.parser import Parser
from harness.core.suggest import nearest


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser of the command line, with the words that reach it, outermost first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, (*path, name))


def test_no_parser_or_subparser_takes_an_abbreviated_option() -> None:
    walked = list(parsers(build_parser()))
    assert len(walked) > 20 and ("cache", "stats") in {path for path, _ in walked}
    for path, parser in walked:
        assert isinstance(parser, Parser) and parser.allow_abbrev is False, path


@pytest.mark.parametrize(
    ("path", "option"),
    [
        (path, max(long, key=len))
        for path, parser in parsers(build_parser())
        if (long := [o for o in parser._option_string_actions if o.startswith("--") and len(o) > 4 and o != "--help"])
    ],
)
def test_every_commands_options_refuse_their_prefixes(path: tuple[str, ...], option: str) -> None:
    parser = dict(parsers(build_parser()))[path]
    _, extras = parser.parse_known_args([*_required(parser), option[:-1]])
    assert extras == [option[:-1]]  # left unrecognized, not taken for `option`


def _required(parser: argparse.ArgumentParser) -> list[str]:
    """Words that satisfy the parser's required arguments, so that only the option under test is in question."""
    words: list[str] = []
    for action in parser._actions:
        if action.option_strings and action.required:
            words += [action.option_strings[0], "x"]
        elif not action.option_strings and action.nargs in (None, "+"):
            words.append("x")
    return words


def test_an_abbreviated_option_is_refused_with_the_full_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--imp", "python"])
    assert stopped.value.code == 2
    assert "conformance run: error: unrecognized arguments: --imp; did you mean --impl?" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "--refrence", "pypi:0.34.12"],
            "conformance run: error: unrecognized arguments: --refrence; did you mean --reference?",
        ),
        (
            ["show", ".", "--feild=content"],
            "conformance show: error: unrecognized arguments: --feild=content; did you mean --field?",
        ),
        (
            ["cache", "stats", "--jsn"],
            "conformance cache stats: error: unrecognized arguments: --jsn; did you mean --json?",
        ),
        (["list", "--zzzzzz"], "conformance list: error: unrecognized arguments: --zzzzzz\n"),
    ],
)
def test_an_unknown_option_is_named_with_the_nearest_option_of_its_command(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["rnu"],
            "conformance: error: argument command: invalid choice: 'rnu'; did you mean 'run'? (choose from 'run', ",
        ),
        (["cache", "stat"], "argument action: invalid choice: 'stat'; did you mean 'stats'? (choose from 'stats', "),
        (["run", "--runtime", "nod"], "argument --runtime: invalid choice: 'nod'; did you mean 'node'? (choose from "),
    ],
)
def test_a_command_or_choice_that_is_not_one_is_named_with_the_nearest(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_nearest_is_none_for_what_is_not_text_or_not_close() -> None:
    assert nearest("colation", ["collation", "names"]) == "collation"
    assert nearest(3, ["3"]) is None and nearest("zzzz", ["collation"]) is None


@pytest.mark.parametrize(
    ("reference", "meant"),
    [
        ("pypi:0.34.21", "pypi:0.34.12"),  # two digits swapped: the newest, not 0.34.2 or 0.34.11
        ("0.34.21", "0.34.12"),  # spelt as given: bare
        ("npm:0.34.12", "pypi:0.34.12"),  # pinned on the other registry
        ("pypi:0.34.21@node", "pypi:0.34.12@node"),  # the variant kept
    ],
)
def test_an_unpinned_reference_is_named_with_the_nearest_pinned_one_before_the_pin_command(
    reference: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--reference", reference]) == 2
    error = capsys.readouterr().err
    assert f"not a pinned release; did you mean {meant}? (pinned: " in error
    assert error.index(f"did you mean {meant}?") < error.index("to use this release, pin it with `conformance pin")


def test_an_unpinned_reference_in_a_file_gets_the_same_advice() -> None:
    from harness.core.reference import recorded_label

    with pytest.raises(ValueError, match=r"'pypi:0\.34\.21' is not a pinned release; did you mean pypi:0\.34\.12\?"):
        recorded_label("pypi:0.34.21")


@pytest.mark.parametrize(
    ("profile", "meant"),
    [
        ("letta-code@0.33.66", "letta-code@0.33.6"),
        ("spec-v3", "spec-v2"),
        ("letta-code@0.34.21", "letta-code@0.34.12"),
    ],
)
def test_an_unknown_profile_is_named_with_the_nearest_profile_or_release(
    profile: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--profile", profile]) == 2
    error = capsys.readouterr().err
    assert f"unknown profile {profile!r}; choose one of " in error and error.rstrip().endswith(f"did you mean {meant}?")


def test_nothing_is_suggested_when_nothing_is_close(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--profile", "zzz"]) == 2 and "did you mean" not in capsys.readouterr().err
