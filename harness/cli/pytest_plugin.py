"""pytest plugin: every scenario in cases/ is a pytest item (`pytest cases/`, `-k` as `conformance run -k`); the
corpus installed with the tool is `pytest --pyargs letta_conformance.cases` from any directory (harness.core.locations).

Each tag (harness/cases/tags.py) is a registered marker and each case's tags are markers of its item, so
pytest's `-k` sees the names `conformance run -k` matches (harness.cases.select.case_names) and `-m TAG`
selects by tag.

Options: `--reference R` (repeatable, default the pinned release), `--impl SPEC` (repeatable, default
`python`: the implementations under test, docs/protocol.md), `--expectations FILE` (repeatable: an
implementation's known failures), `--conformance-profile P`. One Session (one warm reference process per
reference, one runner per implementation) serves the whole pytest run. A case an implementation does not
serve (`unsupported`) is skipped with that reason: not applicable, never a pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cases.load import load_scenario
from harness.cases.rules import is_rules_file, rules_of_cases
from harness.cases.tags import TAGS
from harness.core.model import CaseResult, Scenario, ScenarioError, Status
from harness.core.plural import counted
from harness.core.reference import REFERENCE_FORMS, ReferenceSpec, default_reference
from harness.run.corpus import RunOptions, open_session
from harness.run.session import Session
from harness.runners.implementations import IMPL_FORMS, ImplSpec
from harness.verdict.diff import render_field_diff

_SESSION_KEY = pytest.StashKey[Session]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("letta-conformance")
    group.addoption(
        "--reference", action="append", dest="conformance_references", help=f"{REFERENCE_FORMS} (repeatable)"
    )
    group.addoption("--conformance-profile", dest="conformance_profile", help="the profile to compare under")
    group.addoption("--impl", action="append", dest="conformance_impls", help=f"{IMPL_FORMS} (repeatable)")
    group.addoption(
        "--expectations",
        action="append",
        dest="conformance_expectations",
        help="an implementation's known failures (YAML; repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    for tag, what in TAGS.items():
        config.addinivalue_line("markers", f"{tag}: {what}")


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix == ".yaml" and "cases" in file_path.parts and not is_rules_file(file_path):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def _session(config: pytest.Config) -> Session:
    if _SESSION_KEY not in config.stash:
        refs = config.getoption("conformance_references") or [default_reference()]
        impls = [ImplSpec.parse(text) for text in config.getoption("conformance_impls") or ["python"]]
        expectations = []
        for path in config.getoption("conformance_expectations") or []:
            from harness.run.expectations import load_expectations  # only when a file is given

            expectations.append(load_expectations(Path(path)))
        options = RunOptions(
            [ReferenceSpec.parse(r) for r in refs],
            implementations=impls,
            expectations=expectations,
            profile_override=config.getoption("conformance_profile"),
        )
        config.stash[_SESSION_KEY] = open_session(options)
    return config.stash[_SESSION_KEY]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION_KEY in config.stash:
        config.stash[_SESSION_KEY].close()


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        try:
            scenario = load_scenario(self.path)
        except ScenarioError as error:
            yield InvalidScenarioItem.from_parent(self, name=self.path.stem, error=error)
            return
        item = ScenarioItem.from_parent(self, name=scenario.id, scenario=scenario)
        for tag in scenario.tags:
            item.add_marker(tag)  # a marker: `-m TAG`, and a name pytest's `-k` matches
        yield item


class InvalidScenarioItem(pytest.Item):
    def __init__(self, *, error: ScenarioError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(self.error)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, (self.error.line or 1) - 1, f"invalid scenario {self.path.name}"


class ConformanceFailure(Exception):
    def __init__(self, results: list[CaseResult]) -> None:
        super().__init__(f"{counted(len(results), 'result')} failed")
        self.results = results


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario

    def runtest(self) -> None:
        session = _session(self.config)
        session.rules = rules_of_cases([self.scenario]) or {}  # which features it needs (harness.run.capabilities)
        results = session.run_case(self.scenario)
        failing = [r for r in results if r.failed]
        if failing:
            raise ConformanceFailure(failing)
        known = [r for r in results if r.status in (Status.KNOWN, Status.RUNTIME)]
        if known:
            pytest.xfail("; ".join(f"[{r.reference}] " + "; ".join(r.reasons) for r in known))
        if not results:
            pytest.fail("no reference applies to this case (check its `profiles`)")
        unserved = [r for r in results if r.status == Status.NOT_APPLICABLE]
        if len(unserved) == len(results):
            pytest.skip(
                "not applicable: " + "; ".join(f"[{r.implementation}] " + "; ".join(r.reasons) for r in unserved)
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if not isinstance(excinfo.value, ConformanceFailure):
            return str(super().repr_failure(excinfo))
        lines = [f"{self.scenario.id}: {self.scenario.description}", f"  file: {self.scenario.path}"]
        for result in excinfo.value.results:
            lines.append(f"  [{result.reference}] {result.implementation}: {result.status} (profile {result.profile})")
            lines += [f"    {reason}" for reason in result.reasons]
            for diff in result.diffs:
                lines.append("    " + render_field_diff(diff).replace("\n", "\n    "))
            for outcome in (result.reference_outcome, result.impl_outcome):
                if outcome is not None and outcome.stderr:
                    lines.append("    stderr:\n      " + outcome.stderr.replace("\n", "\n      "))
        return "\n".join(lines)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"scenario {self.scenario.id}"
