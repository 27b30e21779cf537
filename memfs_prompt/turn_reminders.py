"""The reminders a client loop puts before the user's content on each turn, and the post-turn sync that queues them.

letta-code's headless loop (src/headless.ts, headless-bidirectional mode; the CLI and the listener do the same)
wraps every LocalBackend turn in its shared reminder engine (src/reminders/engine.ts): before the turn,
`buildSharedReminderParts` walks `SHARED_REMINDER_CATALOG` and each provider may add a text part, which
`prependReminderPartsToContent` puts before the user's text; after it, in a `finally`, `runPostTurnMemorySync`
queues the memory sync's reminder (`enqueueMemoryGitSyncReminder`) into the same state, for the next turn.
This module owns the part of that a lifecycle observes (docs/lifecycle.md, "Reminders on a turn"), per
conversation (`TurnReminders`):

- `agent-info` (`buildAgentInfo`, src/cli/helpers/agent-info.ts): once per state, on its first turn;
- `memory-git-sync`: the reminders queued by the previous turns' syncs, joined by a blank line, then cleared.
  The sync and its text are memfs_prompt.memory_reminders' (`sync_status`, `format_reminder`): one rule, used by
  the one-shot op `memory_reminder` too.

The reference driver starts each state with the session-level reminders (session-context, secrets-info,
mcp-servers-info, permission-mode) marked sent and gives the engine the agent as the open created it, with no
last run (reference/driver.mjs, `turnReminders`), so those two are what a turn can carry. Their texts name the
memory directory; what a turn observes writes it `<memoryDir>` (`observed`), as the driver writes each side's
own directory. Releases before 0.30.28 have no post-turn sync and observe no reminders
(`Profile.memory_reminders`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UpstreamError
from .memory_reminders import CLOSE, OPEN, format_reminder, sync_status
from .profiles import Profile

MEMORY_DIR_MARK = "<memoryDir>"  # how an observed reminder names the memory directory (reference/driver.mjs)
MAX_PENDING = 25  # MAX_PENDING_INTERACTION_REMINDERS: pushBounded keeps the newest this many


@dataclass(frozen=True)
class AgentInfo:
    """What the loop knows of its agent (headless retrieves it once, at its start)."""

    id: str
    name: str | None
    description: str | None = None


def agent_info_text(agent: AgentInfo, conversation_id: str, memory_dir: str) -> str:
    """`buildAgentInfo({agentInfo, conversationId})` of a local-backend agent with no last run: the memory directory
    line is shown (isLocalBackendEnvEnabled)."""
    conversation = f"\n- **Conversation ID (also stored in `CONVERSATION_ID` env var)**: {conversation_id}"
    lines = [
        f"{OPEN} This is an automated message providing information about you.",
        f"- **Agent ID (also stored in `AGENT_ID` env var)**: {agent.id}{conversation if conversation_id else ''}",
        f"- **Memory directory (also stored in `MEMORY_DIR` env var)**: `{memory_dir}`",
        f"- **Agent name**: {agent.name or '(unnamed)'} (the user can change this with /rename)",
        f"- **Agent description**: {agent.description or '(no description)'} (the user can change this with"
        " /description)",
        "- **Last message**: No previous messages",
        CLOSE,
    ]
    return "\n".join(lines)


@dataclass
class TurnReminders:
    """One conversation's `SharedReminderState`, as far as its turns observe it."""

    has_sent_agent_info: bool = False
    pending_memory_git_sync: list[str] = field(default_factory=list)

    def build(self, agent: AgentInfo, conversation_id: str, memory_dir: Path) -> list[tuple[str, str]]:
        """`buildSharedReminderParts` in headless-bidirectional mode: the applied reminders, in catalog order."""
        applied: list[tuple[str, str]] = []
        if not self.has_sent_agent_info:
            self.has_sent_agent_info = True
            applied.append(("agent-info", agent_info_text(agent, conversation_id, str(memory_dir))))
        if self.pending_memory_git_sync:
            applied.append(("memory-git-sync", "\n\n".join(self.pending_memory_git_sync)))
            self.pending_memory_git_sync.clear()
        return applied

    def after_turn(self, memory_dir: Path, profile: Profile, env: Mapping[str, str] | None) -> None:
        """`runPostTurnMemorySync` with `enqueueReminder` into this state: a failing sync queues nothing (upstream
        logs it)."""
        try:
            result = sync_status(memory_dir, env)
        except UpstreamError:
            return
        text = format_reminder(result, str(memory_dir), profile)
        if text is not None:
            self.pending_memory_git_sync.append(text)
            del self.pending_memory_git_sync[:-MAX_PENDING]


def observed(applied: list[tuple[str, str]], memory_dir: Path) -> list[dict[str, str]]:
    """The turn's `reminders` observation: each applied reminder, the memory directory written `MEMORY_DIR_MARK`."""
    return [{"id": name, "text": text.replace(str(memory_dir), MEMORY_DIR_MARK)} for name, text in applied]


def prepend(applied: list[tuple[str, str]], text: str) -> str:
    """The user's message as the store keeps it: `prependReminderPartsToContent`'s parts, read as one text (the
    parts' texts joined with nothing between, as the reference driver reads a message's content)."""
    return "".join(part for _, part in applied) + text
