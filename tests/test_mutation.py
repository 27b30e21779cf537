"""harness.mutation: the mutant list stays applicable, and a mutant that changes output is killed while
one that does not survives (the machinery, on a one-case corpus with a replayed reference)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_reference import scenario_yaml, write_cases

from harness.cases.load import load_scenarios
from harness.core.model import CompileRequest, Outcome, ScenarioError
from harness.core.reference import ReferenceSpec
from harness.run.session import Session
from harness.runners.base import Runner
from harness.runners.python_port import PythonPortRunner
from harness.tools import mutant_file, mutation
from harness.tools.mutation import (
    DEFAULT_MUTANTS,
    Mutant,
    default_references,
    load_mutants,
    request_key,
    run_mutant,
    summary,
)
from memfs_prompt import profile_for_release
from memfs_prompt.profiles import PROFILES

PACKAGE = Path(__file__).resolve().parent.parent / "memfs_prompt"


def test_every_listed_mutant_applies_exactly_once_and_compiles(tmp_path: Path) -> None:
    import shutil

    mutants = load_mutants(DEFAULT_MUTANTS)
    assert len(mutants) >= 60
    for mutant in mutants:
        copy = tmp_path / mutant.id / "memfs_prompt"
        shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
        mutant.apply(copy)
        mutated = (copy / mutant.file).read_text(encoding="utf-8")
        assert mutated != (PACKAGE / mutant.file).read_text(encoding="utf-8"), mutant.id
        compile(mutated, mutant.file, "exec")


def test_a_snippet_that_is_not_there_once_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\nx = 1\n")
    with pytest.raises(ValueError, match="occurs 2 times"):
        Mutant("twice", "m.py", "x = 1", "x = 2", "why").apply(tmp_path)
    with pytest.raises(ValueError, match="occurs 0 times"):
        Mutant("gone", "m.py", "y = 1", "y = 2", "why").apply(tmp_path)


def package_with(tmp_path: Path, source: str = "x = 1\n") -> Path:
    """A stand-in for memfs_prompt/ holding one file, f.py."""
    package = tmp_path / "pkg"
    package.mkdir(exist_ok=True)
    (package / "f.py").write_text(source)
    return package


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("- id: a\n  file: f.py\n", 1, "a list at the top level; a mutant file is a mapping with one key, `mutants:`"),
        ("mutants:\n  - {id: a, file: f.py, original: x}\n", 2, "mutants/0"),
        ("mutant:\n  - {id: a, file: f.py, original: x, replacement: y, why: z}\n", 1, "unknown key 'mutant'"),
        ("mutants:\n  - {id: a, file: f.py, original: x, replacement: y, why: z, tests: test_x.py}\n", 2, "tests"),
        (
            "mutants:\n  - id: a\n    file: f.py\n    original: x\n    replacement: y\n    why: z\n"
            "    equivalent: e\n    known_survivor: k\n",
            8,
            "keep one",
        ),
        (
            "mutants:\n  - id: a\n    file: g.py\n    original: x\n    replacement: y\n    why: z\n",
            3,
            "mutant 'a': memfs_prompt/g.py does not exist; name a file under memfs_prompt/",
        ),
        (
            "mutants:\n  - id: a\n    file: f.py\n    original: y = 2\n    replacement: y\n    why: z\n",
            4,
            "mutant 'a': its original occurs 0 times in memfs_prompt/f.py (it must occur once)",
        ),
        (
            "mutants:\n" + "  - {id: a, file: f.py, original: x, replacement: y, why: z}\n" * 2,
            3,
            "mutant id 'a' is already used",
        ),
        ("mutants:\n  - &m {id: a, file: f.py, original: x, replacement: y, why: z}\n  - *m\n", 3, "alias"),
        ("mutants:\n  - {id: a, id: b}\n", 2, "'id'"),
    ],
    ids=[
        "top-level-list",
        "missing-keys",
        "misspelt-top-key",
        "tests-not-a-list",
        "equivalent-and-survivor",
        "file-missing",
        "original-missing",
        "id-twice",
        "alias",
        "duplicate-key",
    ],
)
def test_a_malformed_mutant_file_is_refused_at_its_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as refused:
        mutant_file.load_mutants(path, package_with(tmp_path))
    assert refused.value.line == line, str(refused.value)
    assert str(refused.value).startswith(f"{path}:{line}: ") and message in str(refused.value)


def test_an_original_twice_in_its_file_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("mutants:\n  - id: a\n    file: f.py\n    original: x = 1\n    replacement: y\n    why: z\n")
    with pytest.raises(ScenarioError, match=r"m.yaml:4: .*occurs 2 times .* enough around it to be unique"):
        mutant_file.load_mutants(path, package_with(tmp_path, "x = 1\nx = 1\n"))


def test_a_malformed_mutant_file_is_a_usage_error_before_any_baseline_work(tmp_path: Path, monkeypatch, capsys) -> None:
    """exit 2 with the file and line, in well under a second, and no reference answer recorded."""
    import time

    from harness.cli.main import main

    def no_baseline(*args: object) -> None:
        raise AssertionError("the baseline was recorded before the mutant file was checked")

    monkeypatch.setattr(mutation, "record_baseline", no_baseline)
    path = tmp_path / "m.yaml"
    path.write_text("- id: a\n  file: compiler.py\n")
    started = time.perf_counter()
    assert main(["mutation", "--mutants", str(path)]) == 2
    assert time.perf_counter() - started < 1.0
    assert f"{path}:1: a list at the top level" in capsys.readouterr().err
    path.write_text(
        "mutants:\n  - id: a\n    file: compiler.py\n    original: not in the port\n    replacement: y\n    why: z\n"
    )
    assert main(["mutation", "--mutants", str(path)]) == 2
    assert f"{path}:4: mutant 'a': its original occurs 0 times in memfs_prompt/compiler.py" in capsys.readouterr().err


class PortAsReference(Runner):
    """For testing the machinery only: the unmutated port's records stand in for a reference's."""

    def __init__(self, answers: dict[str, dict], version: str = "0.32.18") -> None:
        self.name = f"letta-code@{version}"
        self.port = PythonPortRunner(profile_for_release(version))
        self.answers = answers

    def compile(self, request: CompileRequest) -> Outcome:
        outcome = self.port.compile(request)
        self.answers[request_key(request)] = outcome.to_json()
        return outcome


@pytest.fixture
def one_case_baseline(tmp_path: Path, monkeypatch) -> tuple[Path, list[Path]]:
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    return baseline_of(write_cases(tmp_path / "cases", {"a-case": ""}), tmp_path)


def baseline_of(cases: Path, tmp_path: Path, versions: tuple[str, ...] = ("0.32.18",)) -> tuple[Path, list[Path]]:
    answers: dict[str, dict] = {version: {} for version in versions}
    specs = [ReferenceSpec("npm", version) for version in versions]
    with Session(specs, runner_factory=lambda s, c: PortAsReference(answers[s.value], s.value)) as session:
        results = session.run(load_scenarios([cases]).scenarios)
    baseline = tmp_path / "baseline.json"
    verdicts = {f"{r.case_id} [{r.reference}]": r.status for r in results}
    data = {"references": [f"npm:{v}" for v in versions], "answers": answers, "verdicts": verdicts}
    baseline.write_text(json.dumps(data))
    return baseline, [cases]


def test_a_mutant_that_changes_output_is_killed_and_one_that_does_not_survives(one_case_baseline) -> None:
    baseline, paths = one_case_baseline
    killed = Mutant(
        "meridiem",
        "jsvalues.py",
        'meridiem = "AM" if hours < 12 else "PM"',
        'meridiem = "PM" if hours < 12 else "AM"',
        "why",
    )
    inert = Mutant("comment", "quirks.py", "EXEC_MAX_BUFFER = 1024 * 1024", "EXEC_MAX_BUFFER = 1024 * 1024  # x", "w")
    head = "def js_trim(value: str) -> str:\n"
    crash = Mutant("crash", "quirks.py", head, head + "    1 / 0\n", "why")
    results = [run_mutant(m, baseline, paths, timeout=120) for m in (killed, inert, crash)]
    assert [r.outcome for r in results] == ["killed", "survived", "killed"]
    assert "a-case [0.32.18]: pass -> fail" in results[0].detail
    assert "ZeroDivisionError" in results[2].detail
    text, ok = summary(results)
    assert not ok and "mutation score: 2/3 killed (67%)" in text


def test_a_mutant_of_the_command_line_is_killed_through_python_m_memfs_prompt(one_case_baseline) -> None:
    """The API never calls cli.main: only the corpus run through `python -m memfs_prompt compile` sees these."""
    baseline, paths = one_case_baseline
    now_ignored = Mutant(
        "now-ignored",
        "cli.py",
        "now = parse_now(args.now) if args.now is not None else",
        "now = parse_now('2000-01-01T00:00:00Z') if args.now is not None else",
        "why",
    )
    crlf = Mutant("crlf", "cli.py", 'sys.stdout.write("\\n")', 'sys.stdout.write("\\r\\n")', "why")
    inert = Mutant("help", "cli.py", 'help="includeMemfs: false"', 'help="includeMemfs false"', "why")
    results = [run_mutant(m, baseline, paths, timeout=120) for m in (now_ignored, crlf, inert)]
    assert [r.outcome for r in results] == ["killed", "killed", "survived"], [r.detail for r in results]
    cli = "[python -m memfs_prompt]"
    assert results[0].detail == f"a-case [0.32.18]: pass -> fail (compiledAt, content, coreMemory) {cli}"
    assert results[1].detail.startswith("a-case [0.32.18]: pass -> error (python-cli could not run: stdout is not")
    assert results[1].detail.endswith(cli)


def test_a_mutant_of_the_protocol_server_is_killed_through_python_m_memfs_prompt_serve(tmp_path, monkeypatch) -> None:
    """Neither the API nor the command line runs serve.py: only the corpus run through the served port sees these.
    A memory in UTF-8 makes an answer that is not ASCII (the protocol server escapes it, docs/protocol.md)."""
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    cases = tmp_path / "cases" / "compile"
    cases.mkdir(parents=True)
    (cases / "accented.yaml").write_text(scenario_yaml("accented", body="caf\u00e9"), encoding="utf-8")
    baseline, paths = baseline_of(tmp_path / "cases", tmp_path)
    utf8 = Mutant(
        "utf8", "serve.py", "json.dumps(answer, ensure_ascii=True)", "json.dumps(answer, ensure_ascii=False)", "why"
    )
    inert = Mutant("doc", "serve.py", '"""The answer to one request line', '"""The answer to a request line', "why")
    results = [run_mutant(m, baseline, paths, timeout=120) for m in (utf8, inert)]
    assert [r.outcome for r in results] == ["killed", "survived"], [r.detail for r in results]
    assert results[0].detail.startswith("accented [0.32.18]: pass -> error")
    assert results[0].detail.endswith("[python -m memfs_prompt serve]")


def test_a_mutant_no_case_reaches_is_killed_by_the_unit_tests_it_names(one_case_baseline) -> None:
    """`tests:` runs those pytest node ids against the mutated copy before the corpus; passing, the corpus decides."""
    baseline, paths = one_case_baseline
    quirks = "tests/test_jsvalues.py::test_number_to_string_quirks"
    huge = Mutant("huge", "jsvalues.py", "return float(Decimal(value))", "return float(value)", "why", tests=(quirks,))
    inert = Mutant(
        "inert",
        "quirks.py",
        "EXEC_MAX_BUFFER = 1024 * 1024",
        "EXEC_MAX_BUFFER = 1024 * 1024  # x",
        "w",
        tests=(quirks,),
    )
    gone = Mutant(
        "gone",
        "quirks.py",
        "EXEC_MAX_BUFFER = 1024 * 1024",
        "EXEC_MAX_BUFFER = 1024 * 1024  # x",
        "w",
        tests=("tests/test_jsvalues.py::test_no_such_test",),
    )
    results = [run_mutant(m, baseline, paths, timeout=120) for m in (huge, inert, gone)]
    assert [r.outcome for r in results] == ["killed", "survived", "invalid"], [r.detail for r in results]
    assert results[0].detail.startswith(quirks) and results[0].detail.endswith("failed [unit tests]")
    assert "its tests could not run" in results[2].detail


def test_mutants_come_from_every_file_of_a_directory_and_ids_are_unique_across_files(tmp_path: Path) -> None:
    entry = "mutants:\n  - {{id: {0}, file: f.py, original: x, replacement: y, why: z}}\n"
    (tmp_path / "a.yaml").write_text(entry.format("one"))
    (tmp_path / "b.yaml").write_text(entry.format("two"))
    (tmp_path / "notes.txt").write_text("not mutants")
    package = package_with(tmp_path)
    assert [m.id for m in mutant_file.load_mutants(tmp_path, package)] == ["one", "two"]
    assert [m.id for m in mutant_file.load_mutants([tmp_path / "b.yaml", tmp_path / "a.yaml"], package)] == [
        "two",
        "one",
    ]
    (tmp_path / "b.yaml").write_text(entry.format("one"))
    with pytest.raises(ScenarioError, match=r"b.yaml:2: mutant id 'one' is already used \(.*a.yaml:2\)"):
        mutant_file.load_mutants(tmp_path, package)


def test_the_default_references_are_one_pinned_release_per_profile() -> None:
    references = default_references()
    profiles = [profile_for_release(r.split(":")[1]).name for r in references]
    assert len(set(profiles)) == len(profiles) == len([p for p in PROFILES.values() if p.releases])
    assert references[0] == "npm:0.25.3"


def test_a_mutant_of_the_shared_reading_of_head_is_killed_through_the_compile_path_the_matrix_uses(
    tmp_path: Path, monkeypatch
) -> None:
    """A matrix compiles a case under each profile from one reading of its HEAD, in a worker process
    (harness.run.port_pool); a mutant that closes that reading after its first compile turns the second
    profile's compile into an empty memory. The pass the tool runs first compiles the way the matrix does."""
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    baseline, paths = baseline_of(write_cases(tmp_path / "cases", {"a-case": ""}), tmp_path, ("0.31.12", "0.32.18"))
    original, replacement = (
        "        if heads is None:\n            head.close()",
        "        if True:\n            head.close()",
    )
    closed = Mutant("head-closed-after-first-compile", "compiler.py", original, replacement, "why")
    result = run_mutant(closed, baseline, paths, timeout=120)
    assert result.outcome == "killed", result.detail
    assert result.detail.endswith(f"[{mutation.MATRIX_PASS}]")
    assert "pass -> fail (content, coreMemory" in result.detail


def meridiem_mutant_file(directory: Path) -> Path:
    """A mutant file of one mutant the one-case corpus kills (its date's AM and PM swapped)."""
    mutants = directory / "mutants.yaml"
    mutants.write_text(
        "mutants:\n  - id: meridiem-swapped\n    file: jsvalues.py\n"
        '    original: \'meridiem = "AM" if hours < 12 else "PM"\'\n'
        '    replacement: \'meridiem = "PM" if hours < 12 else "AM"\'\n    why: w\n'
    )
    return mutants


def test_each_mutant_result_is_printed_once_and_the_score_closes_the_run(one_case_baseline, capsys) -> None:
    from harness.cli.main import main

    baseline, paths = one_case_baseline
    mutants = meridiem_mutant_file(paths[0].parent)
    assert main(["mutation", str(paths[0]), "--mutants", str(mutants), "--baseline", str(baseline)]) == 0
    out, err = capsys.readouterr()
    assert (out + err).count("meridiem-swapped") == 1, out + err
    assert out.splitlines()[-1].startswith("mutation score: 1/1 killed (100%)")


def test_an_unmutated_port_that_does_not_reproduce_the_baseline_scores_no_mutant(one_case_baseline, capsys) -> None:
    """The control: the port as it is runs first, as a mutant would. When it does not reproduce the baseline's
    verdicts (here the baseline's one verdict is changed; in life a worker pool that cannot start, or a baseline
    of another corpus), every mutant would read as killed: the run refuses to score them and says why."""
    from harness.cli.main import main

    baseline, paths = one_case_baseline
    data = json.loads(baseline.read_text())
    data["verdicts"] = {key: "fail" for key in data["verdicts"]}
    baseline.write_text(json.dumps(data))
    mutants = meridiem_mutant_file(paths[0].parent)
    assert main(["mutation", str(paths[0]), "--mutants", str(mutants), "--baseline", str(baseline)]) == 1
    out, err = capsys.readouterr()
    assert "error: the unmutated port does not reproduce the baseline's verdicts (a-case [0.32.18]: fail -> pass" in err
    assert "meridiem-swapped" not in out + err and "mutation score" not in out
