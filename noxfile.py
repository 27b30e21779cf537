"""Sessions: tests (unit tests + corpus), install (the wheel in a fresh environment), conformance (-> reports/), bench
(-> reports/bench.json), fuzz, lint, determinism, mutants, upstream-tests (upstream's own tests against the port)."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True


#: The cases `python -m memfs_prompt compile` runs on in the tests session: one process per compile is slow, and
#: the command line only adds argument and output handling to the API the whole corpus already runs on.
PYTHON_CLI_SAMPLE = "bom or crlf or skills or golden"


@nox.session
def tests(session: nox.Session) -> None:
    """Unit tests of the port and the harness, then every scenario against the pinned reference, in one run of
    three implementations (the reference compiles each case once for all of them): the Python port, the port
    over the protocol, and the Letta server with its expectations (a case added without a verdict for an
    implementation fails); then the port's command line on a sample. `pytest cases` runs the corpus as
    pytest items instead."""
    session.install("-e", ".[test]")
    session.run("pytest", "tests", *session.posargs)
    if session.posargs:
        return  # a chosen selection of tests: not the whole corpus
    implementations = [
        "--impl",
        "python",
        "--impl",
        "cmd:python -m memfs_prompt serve",
        "--impl",
        "letta-server:0.16.8",
    ]
    expectations = ["--expectations", "expectations/letta-server-0.16.8.yaml"]
    session.run("conformance", "run", "cases", "-j", "2", *implementations, *expectations, "--report", "reports/tests")
    session.run("conformance", "run", "cases", "-k", PYTHON_CLI_SAMPLE, "--impl", "python-cli")


@nox.session
def install(session: nox.Session) -> None:
    """The tool as a user installs it (tests/test_install.py): the sdist and the wheel built from this checkout, the
    wheel in a fresh virtual environment outside it, and from an empty directory `conformance list`, a sample of
    `conformance run --impl python`, `pytest --pyargs letta_conformance.cases` and `conformance cases export`."""
    session.install("-e", ".[test]")
    session.run("pytest", "tests/test_install.py", *session.posargs, env={"LETTA_CONFORMANCE_INSTALL_TEST": "1"})


@nox.session
def conformance(session: nox.Session) -> None:
    """The corpus against the pinned default letta-code release; reports in reports/. Its venv has pytest too,
    for the pytest route after the README's set-up: `.nox/conformance/bin/pytest cases -k collation`."""
    session.install("-e", ".", "pytest>=8")
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
    """ruff (lint and format) and mypy: the shape the tests of harness/ layout keep is also type- and style-clean."""
    session.install("-e", ".[lint]")
    session.run("ruff", "check", "letta_profiles", "memfs_prompt", "harness", "tests", "benchmarks", "noxfile.py")
    session.run(
        "ruff", "format", "--check", "letta_profiles", "memfs_prompt", "harness", "tests", "benchmarks", "noxfile.py"
    )
    session.run("mypy", "letta_profiles", "memfs_prompt", "harness")
    session.run("mypy", "--strict", "harness/core")  # the records everything else builds on: strictly typed


@nox.session
def matrix(session: nox.Session) -> None:
    """The corpus against every pinned release (each with its profile) in one run: the cases x references
    matrix, the fields each reference was compared on, and the drift report, in reports/matrix/."""
    session.install("-e", ".")
    session.run("conformance", "matrix", "--report", "reports/matrix", *session.posargs)


@nox.session(name="upstream-tests")
def upstream_tests(session: nox.Session) -> None:
    """Upstream's own bun tests of the compiler, the skills block, the frontmatter parser and LocalBackend's prompt
    cache against the Python port (docs/upstream-tests.md): `nox -s upstream-tests -- --git PATH[@REV]`
    (repeatable; `--impl SPEC` for another implementation); reports in reports/upstream-tests/."""
    if not session.posargs:
        session.error("give a clone of letta-code: nox -s upstream-tests -- --git PATH[@REV]")
    session.install("-e", ".")
    session.run("conformance", "upstream-tests", "--report", "reports/upstream-tests", *session.posargs)


@nox.session
def runtimes(session: nox.Session) -> None:
    """Every pinned release under bun, node, and node with LANG=da_DK.UTF-8: where the runtime or the
    locale changes upstream's bytes (reported as runtime-divergence, not as port failures)."""
    session.install("-e", ".")
    # node runs scale-2000-flat-symbols' 2,000 `git show` calls slower than bun: a longer per-request timeout
    runtimes = ["--runtime", "bun", "--runtime", "node", "--locale", "da_DK.UTF-8", "--timeout", "300"]
    bun_ignores_lang = ["--reference", "npm:0.32.18@bun/da_DK.UTF-8"]
    session.run("conformance", "matrix", *runtimes, *bun_ignores_lang, "--report", "reports/runtimes", *session.posargs)


@nox.session
def gate(session: nox.Session) -> None:
    """CI gate: the full matrix; fails when a case that passed against the previous pinned release fails
    against the newest one, and says what to do. `nox -s gate -- --latest` adds the newest npm release."""
    session.install("-e", ".")
    session.run("conformance", "matrix", "--gate", "--report", "reports/gate", *session.posargs)


@nox.session
def determinism(session: nox.Session) -> None:
    """The whole corpus run twice: report.json, junit.xml and index.html must be byte-identical."""
    session.install("-e", ".")
    session.run("conformance", "determinism", "cases", *session.posargs)


@nox.session
def mutants(session: nox.Session) -> None:
    """Hand-written mutants of memfs_prompt/ (every mutants/*.yaml) against the corpus, one pinned release per profile.

    Each mutant runs the corpus through the port's API, then through `python -m memfs_prompt compile`.
    """
    session.install("-e", ".")
    session.run("conformance", "mutation", *session.posargs)
