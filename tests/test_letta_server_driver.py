"""The letta-server reference (reference/letta_server): its pinned install and its JSON-lines driver.

The driver tests run the real Letta server code (PyPI letta==0.16.8) installed by
`ensure_server_env` into $LETTA_CONFORMANCE_CACHE. They are skipped, with the reason, when
LETTA_CONFORMANCE_OFFLINE=1 or when that environment cannot be installed here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.gitenv import isolated_env
from harness.runners.base import CompileRequest
from harness.runners.jsonl_process import JsonLinesRunner

ROOT = Path(__file__).resolve().parents[1]
SERVER_DIR = ROOT / "reference" / "letta_server"
VERSION = "0.16.8"


def _load_install():
    spec = importlib.util.spec_from_file_location("letta_server_install", SERVER_DIR / "install.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


install = _load_install()


# --- the pinned lock (no install needed) ---------------------------------------------------------


def _requirements(path: Path) -> list[str]:
    """Requirement entries of a pip requirements file, continuation lines joined."""
    text = re.sub(r"\\\n", " ", path.read_text())
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("name", [f"requirements-{VERSION}.txt", f"requirements-{VERSION}-build.txt"])
def test_every_locked_requirement_is_exact_and_hashed(name: str) -> None:
    entries = _requirements(SERVER_DIR / name)
    assert entries
    for entry in entries:
        assert re.match(r"^[a-z0-9-]+==[^ ]+ ", entry), entry
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", entry), entry


def test_lock_pins_the_server_release() -> None:
    entries = _requirements(SERVER_DIR / f"requirements-{VERSION}.txt")
    assert any(entry.startswith(f"letta=={VERSION} ") for entry in entries)


def test_unknown_version_is_refused_without_installing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path))
    with pytest.raises(install.ServerEnvError, match="no pinned lock"):
        install.ensure_server_env("0.0.0-not-pinned")
    assert not (tmp_path / "letta-server").exists()


def test_environment_lives_in_the_cache_not_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path))
    assert install.env_dir(VERSION) == tmp_path / "letta-server" / VERSION


def test_lock_digest_covers_both_locks_and_ignores_comments(tmp_path: Path) -> None:
    lock = tmp_path / "requirements-9.txt"
    build = tmp_path / "requirements-9-build.txt"
    lock.write_text("# header\nletta==9 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    build.write_text("setuptools==1 \\\n    --hash=sha256:" + "1" * 64 + "\n")
    first = install._lock_digest(lock)
    lock.write_text("# another header\n" + lock.read_text().split("\n", 1)[1])
    assert install._lock_digest(lock) == first
    build.write_text(build.read_text().replace("setuptools==1", "setuptools==2"))
    assert install._lock_digest(lock) != first


# --- the driver against the real server code ------------------------------------------------------


@pytest.fixture(scope="module")
def server_python() -> Path:
    if os.environ.get("LETTA_CONFORMANCE_OFFLINE") == "1":
        pytest.skip("LETTA_CONFORMANCE_OFFLINE=1: the letta-server environment is not installed offline")
    try:
        return install.ensure_server_env(VERSION)
    except install.ServerEnvError as error:
        pytest.skip(f"the letta-server {VERSION} environment could not be installed: {error}")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("letta-server")


@pytest.fixture(scope="module")
def runner(server_python: Path, workspace: Path):
    env = isolated_env(workspace / "home", workspace)
    server = JsonLinesRunner(f"letta-server@{VERSION}", [str(server_python), str(install.DRIVER)], env, timeout=120.0)
    server.start()
    assert server.start_error is None, server.start_error
    yield server
    server.close()


def _git(repo: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _repo(workspace: Path, name: str, files: dict[str, bytes], commit: bool = True) -> Path:
    env = {
        **isolated_env(workspace / "home", workspace),
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    repo = workspace / name
    repo.mkdir()
    _git(repo, env, "init", "-q", "-b", "main")
    for path, data in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    _git(repo, env, "add", "-A")
    if commit:
        _git(repo, env, "commit", "-q", "-m", "seed")
    return repo


def _request(repo: Path, system: str = "You are a test.\n\n{CORE_MEMORY}") -> CompileRequest:
    return CompileRequest(
        memory_dir=repo,
        system=system,
        agent_id="agent-test",
        conversation_id="conv-test",
        now="2026-01-02T03:04:05.000Z",
        previous_message_count=3,
    )


TINY = {
    "system/persona.md": b"---\ndescription: Who I am\n---\nI am a test.\n",
    "system/human.md": b"---\ndescription: The human\n---\nName: Ada\n",
    "notes/a.md": b"hello\n",
}

TINY_MEMORY = (
    "\n\nReminder: <projection> contains the local path of the memory file projection.\n\n"
    "<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test.\n</self>\n\n"
    "<memory>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n"
    "  <description>The human</description>\n  Name: Ada\n</human>\n"
    "<external_projection>\n${MEMORY_DIR}/\n└── notes/\n    └── a.md\n</external_projection>\n</memory>"
)

TINY_METADATA = (
    "<memory_metadata>\n- AGENT_ID: agent-test\n- CONVERSATION_ID: conv-test\n"
    "- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n"
    "- 3 previous messages between you and the user are stored in recall memory\n</memory_metadata>"
)


@pytest.mark.integration
def test_hello_names_the_server_release(runner: JsonLinesRunner) -> None:
    assert runner.info["product"] == "letta-server"
    assert runner.info["version"] == VERSION
    assert runner.info["importError"] is None


@pytest.mark.integration
def test_compile_renders_a_tiny_repository_as_the_server_does(runner: JsonLinesRunner, workspace: Path) -> None:
    repo = _repo(workspace, "tiny", TINY)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    outcome = runner.compile(_request(repo))
    assert outcome.status == "ok", outcome
    record = outcome.record
    assert record is not None
    assert record["memory"] == TINY_MEMORY
    assert record["memoryMetadata"] == TINY_METADATA
    assert record["coreMemory"] == TINY_MEMORY + "\n\n" + TINY_METADATA
    assert record["content"] == "You are a test.\n\n" + TINY_MEMORY + "\n\n" + TINY_METADATA
    assert record["memfsRevision"] == head
    assert sorted(record["labels"]) == ["notes/a", "system/human", "system/persona"]
    assert "compiledAt" not in record and "rawSystemHash" not in record  # the server keeps neither


@pytest.mark.integration
def test_work_tree_changes_are_not_read(runner: JsonLinesRunner, workspace: Path) -> None:
    repo = _repo(workspace, "dirty", TINY)
    (repo / "system" / "human.md").write_text("uncommitted\n")
    (repo / "system" / "extra.md").write_text("untracked\n")
    outcome = runner.compile(_request(repo))
    assert outcome.status == "ok" and outcome.record is not None
    assert outcome.record["memory"] == TINY_MEMORY


@pytest.mark.integration
def test_system_prompt_without_placeholder_gets_memory_appended(runner: JsonLinesRunner, workspace: Path) -> None:
    repo = _repo(workspace, "append", TINY)
    outcome = runner.compile(_request(repo, system="Base prompt.  "))
    assert outcome.record is not None
    # get_system_message_from_compiled_memory appends "\n\n{CORE_MEMORY}" without trimming the prompt
    assert outcome.record["content"] == "Base prompt.  \n\n" + outcome.record["coreMemory"]


@pytest.mark.integration
def test_upstream_exception_comes_back_as_thrown(runner: JsonLinesRunner, workspace: Path) -> None:
    repo = _repo(workspace, "unborn", {}, commit=False)
    outcome = runner.compile(_request(repo))
    assert outcome.status == "thrown", outcome
    assert outcome.thrown is not None and outcome.thrown.startswith("CalledProcessError: ")


@pytest.mark.integration
def test_missing_directory_is_an_agent_without_a_repository(runner: JsonLinesRunner, workspace: Path) -> None:
    outcome = runner.compile(_request(workspace / "does-not-exist"))
    assert outcome.status == "ok" and outcome.record is not None
    assert outcome.record["memory"] == ""
    assert outcome.record["memfsRevision"] is None


@pytest.mark.integration
def test_bad_request_is_an_error_not_a_record(server_python: Path) -> None:
    lines = b'{"id":1,"op":"compile","memoryDir":3}\n{"id":2,"op":"lifecycle_open"}\nnot json\n'
    done = subprocess.run([str(server_python), str(install.DRIVER)], input=lines, capture_output=True, timeout=120)
    answers = [line for line in done.stdout.decode().splitlines() if line]
    assert len(answers) == 3, done.stderr.decode()[-2000:]
    assert all('"ok": false' in answer for answer in answers)
