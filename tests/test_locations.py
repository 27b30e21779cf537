"""Where the corpus and the reference directory are (harness.core.locations), which corpus a command reads when given
none, `conformance cases export`, and pyproject.toml's package list (issue 37, item 1). The wheel itself, installed
and run from an empty directory, is tests/test_install.py's."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core import locations
from harness.run import meta

ROOT = Path(__file__).resolve().parents[1]


def test_in_a_checkout_the_corpus_and_the_reference_directory_are_the_checkout_s_folders() -> None:
    assert locations.checkout_root() == ROOT
    assert locations.reference_dir() == ROOT / "reference" and locations.project_cases() == ROOT / "cases"


def test_installed_they_are_the_data_package_beside_harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site-packages"  # no pyproject.toml, no reference/ beside harness/: an installed tool
    (site / "harness").mkdir(parents=True)
    monkeypatch.setattr(locations, "SOURCE_ROOT", site)
    assert locations.checkout_root() is None
    assert locations.reference_dir() == site / "letta_conformance" / "reference"
    assert locations.project_cases() == site / "letta_conformance" / "cases"
    assert meta.port_commit() is None  # a venv inside someone's repository does not lend the tool that commit


def test_the_current_directory_s_cases_wins_and_without_one_the_tool_s_corpus_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert locations.default_cases() == locations.project_cases()
    (tmp_path / "cases").mkdir()
    assert locations.default_cases() == Path("cases")


def test_list_in_an_empty_directory_lists_the_tool_s_corpus_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["list", "-k", "bom-frontmatter"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("bom-frontmatter\tcompile\t")
    assert f"no cases/ here: reading the tool's corpus, {ROOT / 'cases'}" in err


def test_a_command_that_writes_cases_never_writes_into_the_tool_s_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["fuzz", "--seconds", "1"]) == 2
    assert "conformance cases export cases" in capsys.readouterr().err


def test_cases_export_writes_every_yaml_file_of_the_corpus_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cases", "export", str(tmp_path / "out")]) == 0
    written = sorted(p.relative_to(tmp_path / "out") for p in (tmp_path / "out").rglob("*") if p.is_file())
    corpus = sorted(p.relative_to(ROOT / "cases") for p in (ROOT / "cases").rglob("*.yaml"))
    assert written == corpus and all(
        (tmp_path / "out" / p).read_bytes() == (ROOT / "cases" / p).read_bytes() for p in corpus
    )
    compile_count = len(list((ROOT / "cases" / "compile").glob("*.yaml")))
    assert f"wrote {compile_count} compile cases" in capsys.readouterr().out


@pytest.mark.parametrize("occupied", ["a file in it", "a file instead"])
def test_cases_export_refuses_a_directory_that_holds_something(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], occupied: str
) -> None:
    dest = tmp_path / "out"
    if occupied == "a file in it":
        dest.mkdir()
        (dest / "mine.yaml").write_text("mine\n")
    else:
        dest.write_text("not a directory\n")
    assert main(["cases", "export", str(dest)]) == 2
    assert f"cases export {dest}: it is not" in capsys.readouterr().err
    assert not (dest / "compile").exists()


def test_pyproject_lists_every_package_of_the_tree_and_maps_the_data_onto_the_checkout_s_folders() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    code = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for top in ("harness", "memfs_prompt", "letta_profiles")
        for p in (ROOT / top).rglob("__init__.py")
    }
    code.add("harness.report.templates")  # a folder of templates only: listed so its files are package data
    listed = set(config["packages"])
    assert code <= listed, f"add to pyproject.toml's packages: {sorted(code - listed)}"
    assert config["package-dir"] == {"letta_conformance.cases": "cases", "letta_conformance.reference": "reference"}
    assert {p for p in listed - code if not p.startswith("letta_conformance.")} == set()
    for package in listed - code:  # every data package is a folder of the checkout
        top, *rest = package.removeprefix("letta_conformance.").split(".")
        assert (ROOT / config["package-dir"][f"letta_conformance.{top}"] / Path(*rest)).is_dir(), package
