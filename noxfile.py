"""Sessions: tests (unit tests + corpus), conformance (-> reports/), bench (-> reports/bench.json), fuzz, lint,
determinism, mutants."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True


@nox.session
def tests(session: nox.Session) -> None:
    """Unit tests of the port and the harness, then every scenario against the pinned reference."""
    session.install("-e", ".[test]")
    session.run("pytest", "tests", "cases", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """The corpus against the pinned default letta-code release; reports in reports/."""
    session.install("-e", ".")
    session.run("conformance", "run", "cases", "--report", "reports", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """The port against the pinned reference: compile speed and growth, start-up, corpus throughput, peak RSS.

    Prints a table and writes reports/bench.json (about 5 minutes; the first run also builds a
    10,000-file repository). `nox -s bench -- --sizes 10 100 1000 --skip-corpus` for a quick look.
    """
    session.install("-e", ".")
    session.run("python", "-m", "benchmarks", *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """Hypothesis-generated repositories against the pinned release; new divergences land in cases/compile."""
    session.install("-e", ".[test]")
    session.run("conformance", "fuzz", *(session.posargs or ["--seconds", "600"]))


@nox.session
def lint(session: nox.Session) -> None:
    session.install("-e", ".[lint]")
    session.run("ruff", "check", "memfs_prompt", "harness", "tests", "benchmarks", "noxfile.py")
    session.run("ruff", "format", "--check", "memfs_prompt", "harness", "tests", "benchmarks", "noxfile.py")
    session.run("mypy", "memfs_prompt", "harness")


@nox.session
def determinism(session: nox.Session) -> None:
    """The whole corpus run twice: report.json, junit.xml and index.html must be byte-identical."""
    session.install("-e", ".")
    session.run("python", "-m", "harness.determinism", "cases", *session.posargs)


@nox.session
def mutants(session: nox.Session) -> None:
    """Hand-written mutants of memfs_prompt/ (mutants/mutants.yaml) against the corpus and every pinned release."""
    session.install("-e", ".")
    session.run("python", "-m", "harness.mutation", *session.posargs)
