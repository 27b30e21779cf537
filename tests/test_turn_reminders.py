"""The reminders a lifecycle turn carries (memfs_prompt.turn_reminders, docs/lifecycle.md "Reminders on a turn"): the
agent-info reminder on a conversation's first turn only, the post-turn sync's reminder on the turn after the one
that found the repository dirty, each conversation with its own state, none before 0.30.28 or in an agent-free
conversation; the texts name the memory directory `<memoryDir>`. The cases of cases/lifecycle/reminder-* compare
the same against the releases' own engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler_cases import SMALL, SYSTEM, RepoSpec, build

from memfs_prompt.protocol import Server
from memfs_prompt.turn_reminders import MEMORY_DIR_MARK, AgentInfo, TurnReminders, agent_info_text

NOW = "2026-01-02T03:04:05.678Z"


def session(memory: Path, git_env: dict[str, str], profile: str = "letta-code@0.34.7") -> tuple[Server, Any]:
    server = Server(git_env=git_env)
    opened = server.handle(
        {
            "id": 1,
            "op": "lifecycle_open",
            "session": "s",
            "memoryDir": str(memory),
            "storageDir": "/unused",
            "system": SYSTEM,
            "now": NOW,
            "profile": profile,
        }
    )
    assert opened["ok"], opened

    def step(**fields: Any) -> dict[str, Any]:
        answer = server.handle({"id": 2, "op": "lifecycle_step", "session": "s", "step": {"now": NOW, **fields}})
        assert answer["ok"] and "observed" in answer, answer
        return answer["observed"]

    return server, step


def ids(observed: dict[str, Any]) -> list[str]:
    return [reminder["id"] for reminder in observed["reminders"]]


def test_agent_info_goes_with_a_conversations_first_turn_only(tmp_path: Path, git_env: dict[str, str]) -> None:
    memory = build(RepoSpec(files=SMALL), tmp_path, git_env)
    _, step = session(memory, git_env)
    first = step(kind="turn", text="hello")
    assert ids(first) == ["agent-info"] and ids(step(kind="turn", text="again")) == []
    assert f"`{MEMORY_DIR_MARK}`" in first["reminders"][0]["text"] and "local-conv-1" in first["reminders"][0]["text"]
    sent = first["executed"]["uiMessages"][-1]["text"]  # the reminder before the text, naming the real directory
    assert sent == first["reminders"][0]["text"].replace(MEMORY_DIR_MARK, str(memory)) + "hello"
    step(kind="new_conversation")
    assert ids(step(kind="turn", text="new")) == ["agent-info"]  # its own state
    step(kind="conversation", index=1)
    assert ids(step(kind="turn", text="back")) == []


def test_a_dirty_repository_reaches_the_model_on_the_next_turn(tmp_path: Path, git_env: dict[str, str]) -> None:
    memory = build(RepoSpec(files=SMALL), tmp_path, git_env)
    _, step = session(memory, git_env)
    step(kind="turn", text="hello")
    (memory / "notes.md").write_text("uncommitted\n")
    assert ids(step(kind="turn", text="found now")) == []  # the sync runs after the turn
    carried = step(kind="turn", text="carried now")["reminders"]
    assert [r["id"] for r in carried] == ["memory-git-sync"]
    assert carried[0]["text"].startswith("<system-reminder>\nMEMORY COMMIT NEEDED")
    assert f"Memory directory: {MEMORY_DIR_MARK}\nStatus: 1 uncommitted memory change(s)." in carried[0]["text"]


def test_no_reminders_before_the_post_turn_sync_or_without_an_agent(tmp_path: Path, git_env: dict[str, str]) -> None:
    memory = build(RepoSpec(files=SMALL), tmp_path, git_env)
    _, step = session(memory, git_env, profile="letta-code@0.25.3")
    assert "reminders" not in step(kind="turn", text="hello")
    _, step = session(memory, git_env, profile="letta-code@0.33.6")
    step(kind="agent_free_conversation", system="raw")
    assert "reminders" not in step(kind="turn", text="hello")


def test_queued_reminders_are_joined_by_a_blank_line_and_bounded() -> None:
    state = TurnReminders(has_sent_agent_info=True)
    state.pending_memory_git_sync = [f"r{n}" for n in range(3)]
    assert state.build(AgentInfo("a", "n"), "c", Path("/m")) == [("memory-git-sync", "r0\n\nr1\n\nr2")]
    assert state.build(AgentInfo("a", "n"), "c", Path("/m")) == []


def test_the_agent_info_text_is_buildAgentInfos_for_an_agent_with_no_run() -> None:
    text = agent_info_text(AgentInfo("agent-1", None), "conv-1", "/abs/memory")
    assert text.splitlines()[-4:] == [
        "- **Agent name**: (unnamed) (the user can change this with /rename)",
        "- **Agent description**: (no description) (the user can change this with /description)",
        "- **Last message**: No previous messages",
        "</system-reminder>",
    ]
    assert "**Agent ID (also stored in `AGENT_ID` env var)**: agent-1\n- **Conversation ID" in text
    assert "(also stored in `MEMORY_DIR` env var)**: `/abs/memory`\n" in text
