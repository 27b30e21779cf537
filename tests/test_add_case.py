"""`conformance add-case`: a real repository with odd names and bytes, written as a case and rebuilt.

The expected trees come from the original repository, read with git itself (`ls-tree -r -z`:
mode, blob id and raw name per entry; equal blob ids mean equal bytes). The compile records
of the original and of the rebuilt repository must be equal, including `memfsRevision` when
the whole linear history is kept (the rebuilt commits are byte-identical objects).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import GitRepo
from hypothesis import given, settings

from harness.cases.load import load_scenario
from harness.cases.write import dump_yaml, repo_spec
from harness.cli.common import PROJECT_CASES
from harness.cli.main import main as conformance
from harness.core.repomodel import RepoModel
from harness.core.repospec import commit_states
from harness.repo.build import MaterializedRepo, materialize_repo
from harness.repo.snapshot import read_snapshot
from harness.run.session import build_request
from harness.runners.python_port import PythonPortRunner
from harness.tools.fuzz.campaign import repo_models
from memfs_prompt.profiles import DEFAULT

ODD_FILES: dict[str | bytes, str | bytes] = {
    "system/persona.md": "---\ndescription: me\n---\nI am.\n",
    b"system/caf\xe9.md": "latin-1 name, not UTF-8\n",  # git quotes it; upstream drops it
    "system/tab\there.md": "control character in the name\n",
    "system/new\nline.md": "newline in the name\n",
    "system/trailing .md": "trailing space in the name\n",
    " lead.md": "leading space\n",
    'notes/quo"te\\back.md': "quote and backslash\n",
    "notes/é日本.md": "non-ASCII name\n",
    "system/bom.md": b"\xef\xbb\xbf---\ndescription: bom\n---\nbody\n",
    "system/crlf.md": b"---\r\ndescription: crlf \r\n---\r\nbody  \r\nline\r\n",
    "system/mixed.md": b"a\r\nb\nc\rd",
    "system/trail.md": "trailing spaces   \n\t\n  ",
    "system/nel.md": "nel\u0085 ls\u2028 nbsp\u00a0 bom\ufeff\n",
    "system/nul.md": b"nul\x00byte\xff\xfeinvalid",
    "system/empty.md": b"",
    "system/yamlish.md": "---\ndescription: |\n  block: scalar\n---\nkey: value\n- item\n",
}


def odd_repo(make_repo) -> GitRepo:
    repo = make_repo(ODD_FILES)
    os.symlink("persona.md", repo.path / "system" / "link.md")
    os.symlink(os.fsdecode(b"\xff-target"), repo.path / "system" / "badlink.md")
    run = repo.write("system/run.md", "#!/bin/sh\necho executable\n")
    run.chmod(0o755)
    repo.commit({}, "second: symlinks and an executable")
    repo.git("mv", "system/persona.md", "system/persona2.md")
    repo.git("rm", "-q", "system/empty.md", os.fsdecode(b"system/caf\xe9.md"))
    repo.commit({"system/human.md": "added in the third commit\n"}, "third\n\nwith a body")
    return repo


def tree_listing(path: Path, env: dict[str, str], rev: str = "HEAD") -> list[bytes]:
    out = subprocess.run(
        ["git", "ls-tree", "-r", "-z", "--full-tree", rev], cwd=path, env=env, capture_output=True, check=True
    ).stdout
    return out.split(b"\0")


def history(path: Path, env: dict[str, str]) -> list[str]:
    out = subprocess.run(["git", "rev-list", "--reverse", "HEAD"], cwd=path, env=env, capture_output=True, check=True)
    return out.stdout.decode().split()


def rebuild(case: Path, tmp_path: Path):
    scenario = load_scenario(case)
    return scenario, materialize_repo(scenario, tmp_path / "rebuilt-cache")


def request_for(scenario, memory_dir: Path):
    return build_request(scenario, MaterializedRepo(memory_dir, memory_dir, None))


def port_record(scenario, memory_dir: Path, env: dict[str, str]) -> dict:
    outcome = PythonPortRunner(DEFAULT, env).compile(request_for(scenario, memory_dir))
    assert outcome.status == "ok", outcome.error
    return outcome.record  # type: ignore[return-value]


def test_add_case_rebuilds_every_commit_byte_for_byte(tmp_path, make_repo, git_env) -> None:
    repo = odd_repo(make_repo)
    assert conformance(["add-case", str(repo.path), "--id", "odd", "--tags", "names", "--out", str(tmp_path)]) == 0
    scenario, rebuilt = rebuild(tmp_path / "odd.yaml", tmp_path)
    assert scenario.tags == ("snapshot", "names")
    original_ids = history(repo.path, git_env)
    assert len(original_ids) == 3
    assert history(rebuilt.memory_dir, git_env) == original_ids  # same commit objects, hence same trees
    for rev in original_ids:
        assert tree_listing(rebuilt.memory_dir, git_env, rev) == tree_listing(repo.path, git_env, rev)
    original = port_record(scenario, repo.path, git_env)
    assert port_record(scenario, rebuilt.memory_dir, git_env) == original
    assert original["memfsRevision"] == original_ids[-1]


def test_add_case_writes_into_the_current_directory_s_cases_and_without_one_asks_for_out(
    tmp_path, make_repo, monkeypatch, capsys
) -> None:
    from harness.cli.common import PROJECT_CASES

    repo = make_repo({"system/a.md": "a\n"})
    work = tmp_path / "work"
    (work / "cases").mkdir(parents=True)
    monkeypatch.chdir(work)
    assert conformance(["add-case", str(repo.path), "--id", "mine"]) == 0
    assert load_scenario(work / "cases" / "compile" / "mine.yaml").id == "mine"  # where `conformance run` reads
    assert not (PROJECT_CASES / "compile" / "mine.yaml").exists()
    monkeypatch.chdir(repo.path.parent)  # no cases/ here
    capsys.readouterr()
    assert conformance(["add-case", str(repo.path), "--id", "mine2"]) == 2
    assert f"error: no cases/ in {repo.path.parent}: give --out DIR" in capsys.readouterr().err
    assert not (PROJECT_CASES / "compile" / "mine2.yaml").exists()


def test_the_case_file_is_readable_yaml_with_escapes_and_base64_only_where_needed(tmp_path, make_repo) -> None:
    repo = odd_repo(make_repo)
    assert conformance(["add-case", str(repo.path), "--id", "odd", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "odd.yaml").read_text(encoding="utf-8")
    assert '"system/tab\\there.md"' in text and '"system/new\\nline.md"' in text
    assert "path_base64: c3lzdGVtL2NhZukubWQ=" in text  # system/caf\xe9.md
    assert "newlines: crlf" in text and "bom: true" in text
    assert "symlink: persona.md" in text and "symlink_base64: /y10YXJnZXQ=" in text
    assert "executable: true" in text
    commits = yaml.safe_load(text)["repo"]["commits"]
    assert commits[2]["delete"] == [{"path_base64": "c3lzdGVtL2NhZukubWQ="}, "system/empty.md", "system/persona.md"]


def test_head_only_rebuilds_the_head_tree_and_names_the_revision_difference(
    tmp_path, make_repo, git_env, capsys
) -> None:
    repo = odd_repo(make_repo)
    assert conformance(["add-case", str(repo.path), "--id", "head", "--head-only", "--out", str(tmp_path)]) == 0
    assert "HEAD is rebuilt without its parents" in capsys.readouterr().out
    scenario, rebuilt = rebuild(tmp_path / "head.yaml", tmp_path)
    assert len(scenario.repo["commits"]) == 1
    assert tree_listing(rebuilt.memory_dir, git_env) == tree_listing(repo.path, git_env)
    original = port_record(scenario, repo.path, git_env)
    copy = port_record(scenario, rebuilt.memory_dir, git_env)
    assert {k: v for k, v in copy.items() if k != "memfsRevision"} == {
        k: v for k, v in original.items() if k != "memfsRevision"
    }


def test_a_memory_directory_inside_a_repository_becomes_memory_subdir(tmp_path, make_repo, git_env) -> None:
    repo = make_repo({"agent/memory/system/persona.md": "inside\n", "other/x.md": "outside\n"})
    memory = repo.path / "agent" / "memory"
    assert conformance(["add-case", str(memory), "--id", "sub", "--out", str(tmp_path)]) == 0
    scenario, rebuilt = rebuild(tmp_path / "sub.yaml", tmp_path)
    assert scenario.repo["memory_subdir"] == "agent/memory"
    assert port_record(scenario, rebuilt.memory_dir, git_env) == port_record(scenario, memory, git_env)


def test_unborn_and_missing_directories_get_their_kind(tmp_path, make_repo) -> None:
    assert read_snapshot(make_repo({}).path).model.kind == "unborn"
    assert read_snapshot(tmp_path / "nowhere").model.kind == "missing"


def test_add_case_names_the_rules_it_is_given_and_asks_for_them_in_a_corpus_with_rules(
    tmp_path, make_repo, capsys
) -> None:
    """A case of a corpus with rules.yaml names the rules it pins (tests/test_rules.py): --rules writes them,
    checked against that file; without them the command says what to add, and where the ids are."""
    repo = make_repo({"system/a.md": "a\n"})
    corpus = tmp_path / "cases"
    (corpus / "compile").mkdir(parents=True)
    shutil.copy(PROJECT_CASES / "rules.yaml", corpus / "rules.yaml")
    out = ["--out", str(corpus / "compile")]
    assert (
        conformance(["add-case", str(repo.path), "--id", "named", "--rules", "memfs-v1", "metadata-block", *out]) == 0
    )
    assert load_scenario(corpus / "compile" / "named.yaml").rules == ("memfs-v1", "metadata-block")
    capsys.readouterr()
    assert conformance(["add-case", str(repo.path), "--id", "typo", "--rules", "memfs-v3", *out]) == 2
    assert "--rules: memfs-v3 is no rule of" in (err := capsys.readouterr().err) and "did you mean memfs-v1?" in err
    assert not (corpus / "compile" / "typo.yaml").exists()
    assert conformance(["add-case", str(repo.path), "--id", "bare", *out]) == 0
    assert "note: name the rules it pins: add `rules: [ID, ...]`" in capsys.readouterr().out
    assert conformance(["add-case", str(repo.path), "--id", "elsewhere", "--out", str(tmp_path)]) == 0
    assert "name the rules" not in capsys.readouterr().out  # no rules file there: nothing to name


def test_add_case_refuses_to_overwrite_a_case(tmp_path, make_repo, capsys) -> None:
    repo = make_repo({"system/a.md": "a\n"})
    assert conformance(["add-case", str(repo.path), "--id", "twice", "--out", str(tmp_path)]) == 0
    assert conformance(["add-case", str(repo.path), "--id", "twice", "--out", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(repo_models())
def test_written_repo_specs_read_back_as_the_same_trees(model: RepoModel) -> None:
    """Any generated tree (risky names, encodings, modes) survives encode -> YAML text -> load -> bytes."""
    spec = yaml.safe_load(dump_yaml({"repo": repo_spec(model)}))["repo"]
    assert commit_states(spec) == [commit.files for commit in model.commits]


@pytest.mark.integration
def test_the_reference_compiles_the_rebuilt_repository_as_the_original(
    tmp_path, make_repo, git_env, reference_bun, release_bundle
) -> None:
    from harness.core.reference import ReferenceSpec
    from harness.runners.bun_reference import BunReferenceRunner

    release_bundle("0.32.18")
    repo = odd_repo(make_repo)
    assert conformance(["add-case", str(repo.path), "--id", "odd", "--out", str(tmp_path)]) == 0
    scenario, rebuilt = rebuild(tmp_path / "odd.yaml", tmp_path)
    runner = BunReferenceRunner(ReferenceSpec("npm", "0.32.18"), tmp_path / "ref-home", ceiling=None, timeout=120)
    runner.start()
    try:
        assert runner.start_error is None, runner.start_error
        original = runner.compile(request_for(scenario, repo.path))
        copy = runner.compile(request_for(scenario, rebuilt.memory_dir))
    finally:
        runner.close()
    assert original.status == "ok", original.error
    assert copy.record == original.record
