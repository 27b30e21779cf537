"""memfs_prompt.compile_system_prompt on small real repositories, against records measured upstream.

Expected records: compiler_expected.MEASURED (measured on letta-code 0.32.18 / 0.25.3 / 0.25.9 under
bun 1.4.5; see that module). The spec-v2 golden bytes are quoted from the spec, chapter 8.6.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from compiler_cases import AGENT, CASES, CONVERSATION, NOW, REPOS, SYSTEM, CompileCase, RepoSpec, build
from compiler_expected import MEASURED

import memfs_prompt.git_head
from memfs_prompt import compile_system_prompt, profile_for_release, resolve_profile
from memfs_prompt.cli import main as cli_main
from memfs_prompt.cli import parse_now

RECORD_KEYS = ["content", "coreMemory", "compiledAt", "rawSystemHash", "memfsRevision"]


def compile_case(case: CompileCase, memory: Path, env: dict[str, str]):
    return compile_system_prompt(
        memory,
        system=case.system,
        agent_id=AGENT,
        conversation_id=CONVERSATION,
        now=parse_now(NOW),
        previous_message_count=case.previous_message_count,
        include_memfs=case.include_memfs,
        profile=profile_for_release(case.release),
        git_env=env,
    )


def head_of(memory: Path, env: dict[str, str]) -> str | None:
    if not memory.is_dir():
        return None
    done = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=memory, env=env, capture_output=True)
    return done.stdout.decode().strip() if done.returncode == 0 else None


def expected_record(case_id: str, head: str | None) -> dict[str, str]:
    record = dict(MEASURED[case_id])
    if record.get("memfsRevision") == "<HEAD>":
        assert head is not None
        record["memfsRevision"] = head
    return record


@pytest.fixture
def built(tmp_path: Path, git_env: dict[str, str]):
    """`built(repo_name)` -> the memory dir of REPOS[repo_name] under tmp_path."""

    def make(name: str) -> Path:
        root = tmp_path / "cases" / name
        root.mkdir(parents=True)
        return build(REPOS[name], root, git_env)

    return make


@pytest.mark.parametrize("case_id", list(CASES))
def test_compile_record_matches_upstream_byte_for_byte(case_id: str, built, git_env) -> None:
    case = CASES[case_id]
    memory = built(case.repo)
    record = compile_case(case, memory, git_env).to_json()
    expected = expected_record(case_id, head_of(memory, git_env))
    assert record == expected
    assert list(record) == list(expected)  # upstream's key order, absent keys left out


def test_compile_reads_head_not_the_work_tree(built, git_env) -> None:
    dirty = built("small_dirty")
    staged = built("small_staged")
    for memory in (dirty, staged):
        core = compile_case(CASES["small"], memory, git_env).core_memory
        assert core == MEASURED["small"]["coreMemory"]
        assert "DIRTY" not in core and "STAGED" not in core and "UNTRACKED" not in core
    assert (dirty / "system" / "human.md").read_text().startswith("---\ndescription: DIRTY")  # the noise is there


@pytest.mark.parametrize("repo", ["missing", "plain", "unborn"])
def test_no_committed_head_gives_no_revision_and_only_metadata(repo: str, built, git_env) -> None:
    record = compile_case(CompileCase(repo), built(repo), git_env).to_json()
    assert "memfsRevision" not in record
    assert record["coreMemory"].startswith("<memory_metadata>\n")
    assert record["coreMemory"] == MEASURED["missing"]["coreMemory"]


def test_include_memfs_false_skips_the_repository(built, git_env) -> None:
    record = compile_case(CASES["small_no_memfs"], built("small"), git_env).to_json()
    assert "memfsRevision" not in record
    assert record["coreMemory"] == MEASURED["missing"]["coreMemory"]


def test_0_25_3_ignores_include_memfs_false(built, git_env) -> None:
    memory = built("small")
    with_memfs = compile_case(CASES["small_0.25.3"], memory, git_env)
    without = compile_case(CASES["small_no_memfs_0.25.3"], memory, git_env)
    assert with_memfs.to_json() == without.to_json()


@pytest.mark.parametrize("release", ["0.25.3", "0.25.9"])
def test_0_25_profiles_have_no_core_memory_key(release: str, built, git_env) -> None:
    record = compile_case(CompileCase("small", release=release), built("small"), git_env).to_json()
    assert list(record) == ["content", "compiledAt", "rawSystemHash", "memfsRevision"]


def test_0_25_external_projection_connectors_are_latin1_mojibake(built, git_env) -> None:
    content = compile_case(CASES["small_0.25.3"], built("small"), git_env).content
    assert "\u00e2\u0094\u0094\u00e2\u0094\u0080\u00e2\u0094\u0080 reference.md" in content
    assert "└──" not in content


def test_record_keys_are_in_upstream_order(built, git_env) -> None:
    # upstream's `return { content, coreMemory, compiledAt, rawSystemHash, memfsRevision }` (0.30.28+)
    record = compile_case(CASES["small"], built("small"), git_env).to_json()
    assert list(record) == RECORD_KEYS
    assert list(json.loads(json.dumps(record))) == RECORD_KEYS


def test_missing_core_memory_variable_is_appended_after_js_trim_end(built, git_env) -> None:
    case = CASES["append_after_trim_end"]
    record = compile_case(case, built("missing"), git_env)
    # trimEnd strips "\u3000 \n\t\ufeff" but keeps U+0085 (not JS whitespace).
    assert record.content.startswith("No variable\u0085\n\n<memory_metadata>")
    assert record.content == MEASURED["append_after_trim_end"]["content"]


def test_dollar_patterns_in_memory_text_are_expanded_in_content_only(built, git_env) -> None:
    record = compile_case(CASES["dollar"], built("dollar"), git_env)
    assert "cost: $& $$ $` $' $1 $<x>" in record.core_memory
    assert "cost: {CORE_MEMORY} $ A B $1 $<x>" in record.content  # $& -> match, $$ -> $, $` -> "A", $' -> "B"
    assert record.content == MEASURED["dollar"]["content"]


def test_every_core_memory_variable_is_replaced(built, git_env) -> None:
    record = compile_case(CASES["two_variables"], built("missing"), git_env)
    assert record.content == f"{record.core_memory}|{record.core_memory}"


# --- two git processes per compile, whatever the tree ------------------------------------------------


def test_a_compile_starts_git_ls_tree_and_one_cat_file(built, git_env, monkeypatch) -> None:
    memory = built("small")
    launched: list[list[str]] = []
    real_popen = subprocess.Popen

    def counting_popen(args, *rest, **kwargs):
        launched.append(list(args))
        return real_popen(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counting_popen)
    record = compile_case(CASES["small"], memory, git_env)
    assert record.memfs_revision is not None and "todo.md" in record.core_memory
    assert len(launched) == 2, launched
    cat_file, ls_tree = sorted(launched)
    assert cat_file[:2] == ["git", "cat-file"] and cat_file[2] in ("--batch", "--batch-command"), launched
    assert ls_tree == ["git", "ls-tree", "-r", "HEAD"]  # quoted as upstream's listing is


def test_two_git_processes_even_for_a_wide_and_deep_tree(tmp_path, git_env, monkeypatch) -> None:
    files = {f"system/d{i}/e{j}/f{k}.md": f"{i}{j}{k}\n" for i in range(4) for j in range(4) for k in range(3)}
    files.update({f"notes/n{i}.md": "n\n" for i in range(40)})
    memory = build(RepoSpec(files=files), tmp_path, git_env)
    calls: list[object] = []
    real = memfs_prompt.git_head.subprocess.Popen

    def counting_popen(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counting_popen)
    record = compile_case(CASES["small"], memory, git_env)
    assert record.core_memory.count("<projection>$MEMORY_DIR/system/d") == 48
    assert all(f"n{i}.md" in record.core_memory for i in range(40))
    assert len(calls) == 2


# --- the spec's v2 example (chapter 8.6) --------------------------------------------------------------

SPEC_SEED = Path("/work/shared/seeds/002_f31d9c8bd29b81d3.txt")

# Quoted from the spec, chapter 8.6 ("两边逐字节一致的输出（599 字节）"): letta-code 70ead335's coreMemory.
SPEC_8_6_CORE_MEMORY = """<human>
<description>What I know about the user.</description>
- 我叫小陆，主要写 TypeScript
- 我更喜欢用 tabs 缩进
</human>

<persona>
<description>Who I am and how I behave.</description>
I am mini-letta, a helpful assistant that remembers.
- 回答末尾总是加上 🦉
</persona>

<memory>
# Memory

- [persona](persona.md) — Who I am and how I behave.
- [human](human.md) — What I know about the user.
- [projects](projects/MEMORY.md) — project notes, read on demand
<deferred-memory>
<directory path="projects/" index="projects/MEMORY.md" />
</deferred-memory>
</memory>"""

# The repository as section 8.6 describes it: three root files, an indexed subdirectory, a skill.
# human.md's body starts with a blank line ("初始正文为空，后来追加的行前面留着一个换行"), which the
# trimmed body must not show.
SPEC_8_6_REPO = {
    "human.md": "---\ndescription: What I know about the user.\n---\n"
    "\n- 我叫小陆，主要写 TypeScript\n- 我更喜欢用 tabs 缩进\n",
    "persona.md": "---\ndescription: Who I am and how I behave.\n---\n"
    "I am mini-letta, a helpful assistant that remembers.\n- 回答末尾总是加上 🦉\n",
    "MEMORY.md": "# Memory\n\n- [persona](persona.md) — Who I am and how I behave.\n"
    "- [human](human.md) — What I know about the user.\n"
    "- [projects](projects/MEMORY.md) — project notes, read on demand\n",
    "projects/MEMORY.md": "---\ndescription: project notes, read on demand\n---\n"
    "# Projects\n\n- [mini-letta](mini-letta.md)\n",
    "projects/mini-letta.md": "---\ndescription: the mini-letta project\n---\nSECRET on-demand project body\n",
    "skills/release-notes/SKILL.md": "---\nname: release-notes\ndescription: write release notes\n---\nSKILL BODY\n",
}


def test_spec_quote_is_599_utf8_bytes() -> None:
    assert len(SPEC_8_6_CORE_MEMORY.encode("utf-8")) == 599


@pytest.mark.skipif(not SPEC_SEED.exists(), reason="the spec text is not on this machine")
def test_spec_quote_is_transcribed_exactly_from_the_spec() -> None:
    text = SPEC_SEED.read_text(encoding="utf-8")
    assert "\n" + SPEC_8_6_CORE_MEMORY + "\n" in text


def test_spec_v2_profile_reproduces_chapter_8_6_byte_for_byte(tmp_path, git_env) -> None:
    memory = build(RepoSpec(files=SPEC_8_6_REPO), tmp_path, git_env)
    record = compile_system_prompt(
        memory,
        system="SYSTEM {CORE_MEMORY}",
        agent_id="agent-demo",
        conversation_id="c",
        now=datetime(2026, 1, 2, tzinfo=UTC),
        profile=resolve_profile("spec-v2"),
        git_env=git_env,
    )
    assert record.core_memory == SPEC_8_6_CORE_MEMORY
    assert len(record.core_memory.encode("utf-8")) == 599
    assert "<memory_metadata>" not in record.core_memory  # v2 has none
    assert record.content == "SYSTEM " + SPEC_8_6_CORE_MEMORY
    assert "SECRET" not in record.content and "SKILL BODY" not in record.content


# --- the CLI ---------------------------------------------------------------------------------------


def cli_args(memory: Path) -> list[str]:
    return [
        "compile",
        str(memory),
        "--json",
        "--agent-id",
        AGENT,
        "--conversation-id",
        CONVERSATION,
        "--system",
        SYSTEM,
        "--now",
        NOW,
    ]


def test_cli_module_prints_the_measured_record(built, git_env) -> None:
    memory = built("small")
    done = subprocess.run(
        [sys.executable, "-m", "memfs_prompt", *cli_args(memory)], env=git_env, capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(b"\n")
    record = json.loads(done.stdout)
    assert record == expected_record("small", head_of(memory, git_env))
    assert list(record) == RECORD_KEYS
    assert done.stderr == b""


def test_cli_warns_on_stderr_for_a_missing_directory(tmp_path, capsys) -> None:
    assert cli_main(cli_args(tmp_path / "nope")) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == MEASURED["missing"]
    assert "warning:" in err and "does not exist" in err


def test_cli_exits_2_for_a_bad_now(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["compile", str(tmp_path), "--json", "--now", "yesterday"])
    assert exit_info.value.code == 2
    assert "--now" in capsys.readouterr().err


def test_cli_exits_2_for_an_unknown_profile(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["compile", str(tmp_path), "--json", "--profile", "letta-code@9.9.9"])
    assert exit_info.value.code == 2
    assert "unknown profile" in capsys.readouterr().err


# --- re-measurement against the real bundles -----------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("release", sorted({c.release for c in CASES.values()}))
def test_measured_records_still_match_upstream(release: str, tmp_path, reference_bun, release_bundle) -> None:
    from conftest import git_env_for
    from upstream_oracle import reference_compile

    env = git_env_for(tmp_path / "home", ceiling=tmp_path)
    ids = [cid for cid, case in CASES.items() if case.release == release]
    memories, requests = {}, []
    for cid in ids:
        case = CASES[cid]
        root = tmp_path / cid
        root.mkdir()
        memories[cid] = build(REPOS[case.repo], root, env)
        requests.append(
            {
                "memoryDir": str(memories[cid]),
                "system": case.system,
                "agentId": AGENT,
                "conversationId": CONVERSATION,
                "now": NOW,
                "previousMessageCount": case.previous_message_count,
                "includeMemfs": case.include_memfs,
            }
        )
    answers = reference_compile(reference_bun, release_bundle(release), requests, env)
    for cid, answer in zip(ids, answers, strict=True):
        assert answer["ok"] and "record" in answer, answer
        assert answer["record"] == expected_record(cid, head_of(memories[cid], env)), cid
        assert list(answer["record"]) == list(MEASURED[cid]), cid
