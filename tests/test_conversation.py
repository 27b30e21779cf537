"""The Python conversation cache (memfs_prompt.conversation): branches, update block, deliveries.

Expected texts come from the spec (chapter 9.3 quotes formatMidConversationMemoryUpdate) and the
branches from upstream's getOrCompileSystemPrompt as read in the release bundles; the lifecycle
corpus (cases/lifecycle) checks the same behaviour against the real builds.
"""

from __future__ import annotations

import json
import math
import subprocess
from datetime import UTC, datetime

import pytest

from memfs_prompt import resolve_profile
from memfs_prompt.compiler import CompiledPrompt
from memfs_prompt.conversation import LocalConversations, format_memory_update, wrap_reminder
from memfs_prompt.errors import UpstreamError
from memfs_prompt.jsvalues import JsDate
from memfs_prompt.model_handles import model_for_update

PERSONA = "---\ndescription: who I am\n---\nI am a helpful agent.\n"
FACT = "favourite colour is teal"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def compiled(core_memory: str, revision: str | None) -> CompiledPrompt:
    return CompiledPrompt("c", core_memory, "t", "h", revision)


def test_memory_update_text_is_the_spec_quoted_format():
    text = format_memory_update(compiled("<self>\nx\n</self>\n\n \t", "abc123"))
    assert text == (
        "<memory_update>\n"
        "The local memory filesystem has been edited and committed at revision abc123.\n"
        "This updates part of your persona/system memory. Treat the following freshly rendered memory context as "
        "authoritative from now on; where it conflicts with earlier memory context, this newer memory context wins.\n"
        "\n"
        "<self>\nx\n</self>\n"
        "</memory_update>"
    )


def test_memory_update_without_revision_says_unknown():
    assert "committed at revision unknown." in format_memory_update(compiled("m", None))


def test_memory_update_trims_the_js_whitespace_set_at_the_end_only():
    text = format_memory_update(compiled("\ufeffa\u00a0\u3000\ufeff\n", "r"))
    assert "\n\ufeffa\n</memory_update>" in text


def test_reminder_wraps_in_system_reminder_tags():
    assert wrap_reminder("x") == "<system-reminder>\nx\n</system-reminder>"


def agent_for(repo, profile: str, model: str = "openai/gpt-5.5", delivery: str = "mid-conversation"):
    return LocalConversations(
        repo.path,
        agent_id="agent-1",
        system="You are X.\n\n{CORE_MEMORY}",
        model=model,
        profile=resolve_profile(profile),
        clock=lambda: NOW,
        delivery=delivery,
        git_env=repo.env,
    )


def probe(repo, agent):
    conversation = agent.create_conversation()
    turns = [agent.turn(conversation, "hello")]
    repo.commit({"system/persona.md": PERSONA + f"The user's {FACT}.\n"})
    turns.append(agent.turn(conversation, "colour?"))
    turns.append(agent.turn(conversation, "again"))
    return conversation, turns


def table(turns):
    return [
        (FACT in t.system_prompt, FACT in (t.mid_conversation_system_prompt or ""), len(t.ui_messages)) for t in turns
    ]


def test_update_profile_reproduces_the_spec_probe_table(make_repo):
    repo = make_repo({"system/persona.md": PERSONA})
    _, turns = probe(repo, agent_for(repo, "letta-code@0.32.18"))
    assert table(turns) == [(False, False, 1), (False, True, 3), (False, False, 5)]  # spec 9.4
    assert turns[0].system_prompt == turns[1].system_prompt == turns[2].system_prompt


@pytest.mark.parametrize("profile", ["letta-code@0.25.3", "letta-code@0.30.28", "letta-code@0.32.8"])
def test_recompiling_profiles_put_the_commit_in_the_system_prompt(make_repo, profile):
    repo = make_repo({"system/persona.md": PERSONA})
    _, turns = probe(repo, agent_for(repo, profile))
    assert table(turns) == [(False, False, 1), (True, False, 3), (True, False, 5)]
    assert "- 3 previous messages between you and the user" in turns[1].system_prompt


def test_gated_profile_sends_the_update_to_opus_4_8_only(make_repo):
    repo = make_repo({"system/persona.md": PERSONA})
    _, turns = probe(repo, agent_for(repo, "letta-code@0.31.12", model="anthropic/claude-opus-4-8"))
    assert table(turns) == [(False, False, 1), (False, True, 3), (False, False, 5)]


def test_update_keeps_prompt_bytes_and_moves_the_cached_revision(make_repo):
    repo = make_repo({"system/persona.md": PERSONA})
    conversation, turns = probe(repo, agent_for(repo, "letta-code@0.32.18"))
    assert conversation.compiled is not None
    assert conversation.compiled.content == turns[0].system_prompt
    assert conversation.compiled.memfs_revision == repo.head()
    assert FACT in conversation.compiled.core_memory
    assert [m.role for m in conversation.messages] == ["user", "assistant"] * 3


def test_persisted_reminder_stays_in_context_and_is_stored_once(make_repo):
    repo = make_repo({"system/persona.md": PERSONA})
    conversation, turns = probe(repo, agent_for(repo, "spec-v2", delivery="persisted-reminder"))
    assert turns[1].mid_conversation_system_prompt is None
    assert all(FACT not in t.system_prompt for t in turns)  # spec 9.7: the system prompt did not change
    assert any(FACT in m.text for m in turns[2].ui_messages)  # still visible on the third turn
    assert sum("<memory_update>" in m.text for m in conversation.messages) == 1


def test_changed_raw_system_prompt_drops_cached_prompts_and_recompiles(make_repo):
    repo = make_repo({"system/persona.md": PERSONA})
    agent = agent_for(repo, "letta-code@0.32.18")
    conversation = agent.create_conversation()
    agent.turn(conversation, "hello")
    repo.commit({"system/persona.md": PERSONA + f"{FACT}\n"})
    agent.update_system("Pirate.\n{CORE_MEMORY}")
    assert conversation.compiled is None
    turn = agent.turn(conversation, "ahoy")
    assert turn.mid_conversation_system_prompt is None
    assert turn.system_prompt.startswith("Pirate.\n") and FACT in turn.system_prompt


def test_new_conversation_ids_count_from_one(make_repo):
    repo = make_repo({"system/persona.md": PERSONA})
    agent = agent_for(repo, "letta-code@0.32.18")
    assert [agent.create_conversation().id for _ in range(2)] == ["local-conv-1", "local-conv-2"]


@pytest.mark.parametrize(("profile", "recompiles"), [("letta-code@0.32.18", True), ("letta-code@0.25.9", False)])
def test_compaction_leaves_one_summary_message_and_recompiles_from_0_30(make_repo, profile, recompiles):
    repo = make_repo({"system/persona.md": PERSONA})
    agent = agent_for(repo, profile)
    conversation = agent.create_conversation()
    agent.turn(conversation, "hello")
    repo.commit({"system/persona.md": PERSONA + f"{FACT}\n"})
    assert agent.compact(conversation, "summary") == (2, 1)
    assert [m.role for m in conversation.messages] == ["user"]
    alert = json.loads(conversation.messages[0].text)
    assert alert["type"] == "system_alert"
    assert alert["message"].endswith("The following is a summary of the previous messages:\n summary")
    assert conversation.compiled is not None
    assert (FACT in conversation.compiled.content) is recompiles


# --- an Invalid Date clock and a system edit beside agent-free conversations -----------------------
# Measured on the real builds (cases/lifecycle/invalid-clock-*.yaml, agent-free-keeps-prompt-on-system-edit.yaml):
# 0.30.28+ stamp the user's message with the clock before storing it, 0.25.x stamp it from a counter and
# format the clock in the git debug log after storing it; a compaction stamps before replacing anything.

INVALID = JsDate(math.nan)


class Clock:
    """A clock a test moves between steps, as a lifecycle `clock` step does."""

    def __init__(self) -> None:
        self.now: datetime | JsDate = NOW

    def __call__(self) -> datetime | JsDate:
        return self.now


def agent_with_clock(repo, profile: str) -> tuple[LocalConversations, Clock]:
    clock = Clock()
    agent = LocalConversations(
        repo.path,
        agent_id="agent-1",
        system="You are X.\n\n{CORE_MEMORY}",
        profile=resolve_profile(profile),
        clock=clock,
        git_env=repo.env,
    )
    return agent, clock


def after_one_turn_at_an_invalid_clock(make_repo, profile):
    """An agent over a one-block repository whose conversation had one turn; its clock is now an Invalid Date."""
    repo = make_repo({"system/persona.md": PERSONA})
    agent, clock = agent_with_clock(repo, profile)
    conversation = agent.create_conversation()
    agent.turn(conversation, "hello")
    clock.now = INVALID
    return agent, clock, conversation


@pytest.mark.parametrize("profile", ["letta-code@0.30.28", "letta-code@0.32.18", "letta-code@0.34.12"])
def test_an_invalid_clock_throws_on_a_turn_that_reuses_the_cached_prompt_before_storing_it(make_repo, profile):
    repo = make_repo({"system/persona.md": PERSONA})
    agent, clock = agent_with_clock(repo, profile)
    conversation = agent.create_conversation()
    agent.turn(conversation, "hello")
    cached = conversation.compiled
    clock.now = INVALID
    with pytest.raises(UpstreamError, match="Invalid Date"):
        agent.turn(conversation, "reused")
    assert [m.text for m in conversation.messages] == ["hello", "pong"]
    assert conversation.compiled is cached


@pytest.mark.parametrize("profile", ["letta-code@0.25.3", "letta-code@0.25.9"])
def test_0_25_stores_the_user_message_before_an_invalid_clock_throws(make_repo, profile):
    agent, clock, conversation = after_one_turn_at_an_invalid_clock(make_repo, profile)
    with pytest.raises(UpstreamError, match="Invalid Date"):
        agent.turn(conversation, "reused")
    assert [m.role for m in conversation.messages] == ["user", "assistant", "user"]
    clock.now = NOW
    assert agent.turn(conversation, "valid").history_count == 4


@pytest.mark.parametrize("profile", ["letta-code@0.25.9", "letta-code@0.34.12"])
def test_compaction_with_an_invalid_clock_throws_and_keeps_every_message(make_repo, profile):
    agent, _clock, conversation = after_one_turn_at_an_invalid_clock(make_repo, profile)
    with pytest.raises(UpstreamError, match="Invalid Date"):
        agent.compact(conversation, "summary")
    assert [m.text for m in conversation.messages] == ["hello", "pong"]


def test_agent_free_creation_and_turns_stamp_the_clock_though_nothing_is_compiled(make_repo):
    repo = make_repo({"system/persona.md": PERSONA})
    agent, clock = agent_with_clock(repo, "letta-code@0.34.12")
    clock.now = INVALID
    with pytest.raises(UpstreamError, match="Invalid Date"):
        agent.create_agent_free_conversation("local-conv-x", system="raw", model="openai/gpt-5.5")
    assert "local-conv-x" not in agent.conversations
    clock.now = NOW
    worker = agent.create_agent_free_conversation("local-conv-y", system="raw", model="openai/gpt-5.5")
    clock.now = INVALID
    with pytest.raises(UpstreamError, match="Invalid Date"):
        agent.turn(worker, "hello")
    assert worker.messages == []


def test_a_system_edit_keeps_the_prompt_cached_in_an_agent_free_conversation(make_repo):
    repo = make_repo({"system/persona.md": PERSONA})
    agent, _ = agent_with_clock(repo, "letta-code@0.34.12")
    own = agent.create_conversation()
    worker = agent.create_agent_free_conversation("local-conv-w", system="raw", model="openai/gpt-5.5")
    recompiled = agent.recompile(worker)
    agent.update_system("Pirate.\n{CORE_MEMORY}")
    assert own.compiled is None  # the agent's own conversation is dropped
    assert worker.compiled is recompiled  # clearCompiledSystemPromptsForAgent skips agent-free:<id>


# --- a repository whose HEAD names no commit (upstream's ensureLocalMemoryRepo) ------------------------------


def without_identity(agent: LocalConversations) -> LocalConversations:
    """The agent's git without the test environment's GIT_AUTHOR_*/GIT_COMMITTER_* names, which would override
    the `-c user.name` upstream passes (as they would upstream's)."""
    agent.git_env = {k: v for k, v in (agent.git_env or {}).items() if not k.endswith(("_NAME", "_EMAIL"))}
    return agent


def test_a_head_that_names_no_commit_gets_upstreams_initial_commit_of_the_index(make_repo):
    repo = make_repo({"system/persona.md": PERSONA})
    agent = without_identity(agent_for(repo, "letta-code@0.34.12"))
    agent.agent_name = "  conformance "
    conversation = agent.create_conversation()
    agent.turn(conversation, "hello")
    repo.git("update-ref", "-d", "refs/heads/main")  # unborn: `git rev-parse --verify HEAD` fails
    turn = agent.turn(conversation, "still there?")
    made = repo.git("log", "-1", "--format=%an <%ae>|%s|%P|%T").decode().strip()
    index_tree = repo.git("write-tree").decode().strip()
    assert made == f"conformance <agent-1@letta.com>|chore: initialize empty local memory||{index_tree}"
    assert f"committed at revision {repo.head()}." in (turn.mid_conversation_system_prompt or "")
    assert "I am a helpful agent." in (turn.mid_conversation_system_prompt or "")


def test_an_agent_without_a_name_commits_as_letta_agent(make_repo):
    repo = make_repo({})  # unborn from the start
    agent = without_identity(agent_for(repo, "letta-code@0.34.12"))
    agent.create_conversation()
    assert repo.git("log", "-1", "--format=%an|%ae").decode().strip() == "Letta Agent|agent-1@letta.com"


def test_a_memory_directory_without_git_is_initialised_on_main(tmp_path, git_env):
    agent = LocalConversations(
        tmp_path / "fresh", agent_id="agent-1", system="S {CORE_MEMORY}", clock=lambda: NOW, git_env=git_env
    )
    conversation = agent.create_conversation()
    head = subprocess.run(["git", "symbolic-ref", "HEAD"], cwd=tmp_path / "fresh", env=git_env, capture_output=True)
    assert head.stdout.decode().strip() == "refs/heads/main"
    assert conversation.compiled is not None and conversation.compiled.memfs_revision is not None


def broken_turn(make_repo, profile: str):
    """One turn, then the HEAD file emptied (no repository for git) and a turn that throws, then HEAD repaired."""
    repo = make_repo({"system/persona.md": PERSONA})
    agent = agent_for(repo, profile)
    conversation = agent.create_conversation()
    agent.turn(conversation, "hello")
    head = repo.path / ".git" / "HEAD"
    head.write_text("")
    with pytest.raises(UpstreamError, match="Command failed"):
        agent.turn(conversation, "broken")
    head.write_text("ref: refs/heads/main\n")
    return agent, conversation


def test_a_turn_whose_compile_throws_leaves_its_run_active_from_0_33_6(make_repo):
    agent, conversation = broken_turn(make_repo, "letta-code@0.33.6")
    with pytest.raises(UpstreamError, match=r"Conversation local-conv-1 already has an active run \(local-run-2\)"):
        agent.turn(conversation, "repaired")
    assert [m.text for m in conversation.messages] == ["hello", "pong", "broken"]  # the refused turn stores nothing
    assert agent.turn(agent.create_conversation(), "fresh").history_count == 1


def test_before_0_33_6_the_turn_after_a_failed_one_runs(make_repo):
    agent, conversation = broken_turn(make_repo, "letta-code@0.33.3")
    assert agent.turn(conversation, "repaired").history_count == 4  # the failed turn's message was stored


@pytest.mark.parametrize(
    ("requested", "on_0_25", "on_0_30"),
    [
        ("", "openai/gpt-5.5", "openai/gpt-5.5"),
        ("auto", "openai/gpt-5.5", "openai/gpt-5.5"),
        ("letta/", "openai/gpt-5.5", "openai/gpt-5.5"),
        (" auto", " auto", " auto"),
        ("LETTA/x", "LETTA/x", "LETTA/x"),
        ("lc-anthropic/claude-opus-4-8", "lc-anthropic/claude-opus-4-8", "anthropic/claude-opus-4-8"),
        ("moonshotai/m/n", "moonshotai/m/n", "moonshot/m/n"),
        ("chatgpt_oauth/m", "chatgpt_oauth/m", "chatgpt-plus-pro/m"),
        ("openai-codex/m", "openai-codex/m", "chatgpt-plus-pro/m"),
        ("openai-codex/m-fast", "openai-codex/m-fast", "openai-codex/m-fast"),
        ("lc-anthropic/", "lc-anthropic/", "lc-anthropic/"),
    ],
)
def test_a_model_update_stores_upstream_s_handle(requested: str, on_0_25: str, on_0_30: str) -> None:
    """`updateAgent({model})` as measured on 0.25.3 and 0.30.28 (cases model-default-handles, model-handle-prefixes)."""
    assert model_for_update(requested, resolve_profile("letta-code@0.25.3")) == on_0_25
    assert model_for_update(requested, resolve_profile("letta-code@0.30.28")) == on_0_30
