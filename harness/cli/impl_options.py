"""What the options say of the implementations under test beyond `--impl`: `--impl-env NAME[=VALUE]`, a variable
passed on top of their isolated environment (harness.repo.gitenv; the names the isolation pins are refused), and
`--expectations FILE`, each file matched to one implementation by the name its hello gives or the --impl it names;
and a corpus run's RunOptions as `run` and `matrix` read them from their options (corpus_options)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import replace
from typing import Any

from harness.cli.common import UsageError, existing, rules_of
from harness.core.model import Scenario, ScenarioError
from harness.core.reference import ReferenceSpec
from harness.repo.gitenv import pinned_by_isolation
from harness.run.corpus import RunOptions
from harness.runners.implementations import ImplSpec
from letta_profiles import DEFAULT_PROFILE

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def add_impl_env(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--impl-env",
        action="append",
        metavar="NAME[=VALUE]",
        help="a variable for the implementations under test, on top of their isolated environment: NAME=VALUE, or "
        "NAME to pass yours on (repeatable; docs/protocol.md, Environment)",
    )


def impl_env(args: argparse.Namespace) -> dict[str, str]:
    """`--impl-env NAME=VALUE` or `--impl-env NAME` (the caller's value), checked: a name the isolation pins
    (HOME, the locale, TZ, PATH, git's) or a NAME the caller has not set is a UsageError saying what to do."""
    passed: dict[str, str] = {}
    for text in getattr(args, "impl_env", None) or []:
        name, sep, value = text.partition("=")
        if not _ENV_NAME.match(name):
            raise UsageError(f"--impl-env {text}: {name!r} is no variable name; write NAME=VALUE or NAME")
        if pinned_by_isolation(name):
            raise UsageError(
                f"--impl-env {text}: {name} is pinned by the isolated environment every "
                "implementation runs in (docs/protocol.md, Environment), so that runs compare alike; "
                "it cannot be passed"
            )
        if not sep:
            if name not in os.environ:
                raise UsageError(f"--impl-env {name}: {name} is not set here; give its value (--impl-env {name}=VALUE)")
            value = os.environ[name]
        passed[name] = value
    return passed


def expectations_of(args: argparse.Namespace, impls: list[ImplSpec]) -> list[Any]:
    """`--expectations FILE`s, each loaded (a refusal names its line) and matched to one of the implementations
    under test: by the name its hello gives (the file's `name:`), else by the --impl it names (`implementation:`);
    two files for one implementation are refused."""
    loaded: dict[str, Any] = {}
    said: dict[str, str | None] | None = None  # label -> hello name, asked once, only if a file needs it
    for path in getattr(args, "expectations", None) or []:
        from harness.run.expectations import load_expectations  # only when a file is given

        try:
            expectations = load_expectations(existing(path, "--expectations"))
        except ScenarioError as error:
            raise UsageError(f"--expectations: {error}") from None
        labels = [impl.label for impl in impls]
        label = ImplSpec.parse(expectations.implementation).label if expectations.implementation else None
        if expectations.name and label not in labels:
            said = said if said is not None else hello_names(args, impls)
            label = next((known for known, name in said.items() if name == expectations.name), label)
            if label not in labels:
                names = ", ".join(f"{known} says {name!r}" for known, name in said.items()) or "none"
                raise UsageError(
                    f"--expectations {path}: it is for the implementation named "
                    f"{expectations.name!r} (name:), and no implementation under test says hello with "
                    f"that name ({names})"
                )
            expectations = replace(expectations, implementation=label)
        if label not in labels:
            raise UsageError(
                f"--expectations {path}: it is for {label}, which is not under test (--impl: "
                f"{', '.join(labels)}); give the file `name:` (what the implementation's hello calls "
                "it, docs/expectations.md) so it matches wherever the program lives"
            )
        if label in loaded:
            raise UsageError(f"--expectations {path}: a second file for {label} ({loaded[label].path})")
        loaded[label] = expectations
    return list(loaded.values())


def hello_names(args: argparse.Namespace, impls: list[ImplSpec]) -> dict[str, str | None]:
    """What each implementation under test calls itself in hello (started once, in the run's environment)."""
    from harness.acquire.releases import cache_root
    from harness.repo.gitenv import isolated_env
    from harness.runners.implementations import ImplContext, hello_name

    home, ceiling = cache_root() / "home", cache_root() / "repos"
    context = ImplContext(
        isolated_env(home, ceiling), home / "impl", ceiling, getattr(args, "timeout", None) or 60.0, impl_env(args)
    )
    return {impl.label: hello_name(impl, DEFAULT_PROFILE, context) for impl in impls}


def corpus_options(
    args: argparse.Namespace,
    specs: list[ReferenceSpec],
    scenarios: list[Scenario],
    impls: list[ImplSpec],
    expectations: list[Any],
    **more: Any,
) -> RunOptions:
    """A corpus run as its command line gives it: the references and implementations, `--timeout`, `-j`,
    `--impl-env`, `--no-timing`, the corpus's rules and the command recorded in report.json (`more`: the rest)."""
    return RunOptions(
        specs,
        implementations=impls,
        expectations=expectations,
        timeout=args.timeout,
        jobs=args.jobs,
        rules=rules_of(scenarios),
        impl_env=impl_env(args),
        command=["conformance", *sys.argv[1:]],
        timing=not args.no_timing,
        **more,
    )
