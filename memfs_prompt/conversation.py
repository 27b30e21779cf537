"""The per-conversation system-prompt cache and the `<memory_update>` lifecycle.

A port of what upstream's `LocalBackend` does around the compiler on each turn
(`getOrCompileSystemPrompt`, `compileAndMaybePersistSystemPrompt`,
`formatMidConversationMemoryUpdate`), together with the small part of its store that the
model's input depends on: the cached compile record per conversation and the stored
messages. Releases differ in the cache's branches (see `Profile.lifecycle`):

- `recompile` (0.25.x): reuse the cached prompt while the raw system prompt and the memory
  revision are unchanged, otherwise compile it again;
- `update-for-models` (0.30.28 to 0.32.8): a new memory revision keeps the system prompt bytes
  and sends a `<memory_update>` block, but only for the models in `Profile.update_models`;
  other models get a full compile;
- `update` (0.32.17 and later): the update block for every model.

The block goes to the model once, as a mid-conversation system message, and is not stored
(`delivery="mid-conversation"`, upstream). The spec's alternative
(`delivery="persisted-reminder"`, chapter 9.5) stores it as a user-role `<system-reminder>`
message, so it stays in context on later turns.

Before every compile upstream makes sure the memory repository has a commit (`ensureLocalMemoryRepo`;
memfs_prompt.memory_repo): a HEAD that names none (an unborn branch) gets an empty commit of the index, and
a broken repository (an empty HEAD file) makes the compile throw. From 0.33.6 a turn whose compile throws
leaves its run active, so every later turn of that conversation throws (`Profile.failed_turn_keeps_run`).

Upstream stamps what it stores with the pinned clock (`new Date().toISOString()`), so an Invalid Date
throws wherever a step first stamps something, whether or not a compile follows (`_stamp`): before
a turn's user message is stored (0.30.28+; 0.25.x after it, see `Profile.turn_clock`), before a
compaction replaces the messages, and when an agent-free conversation is created.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from .compiler import CompiledPrompt, compile_system_prompt
from .git_head import committed_revision
from .jsvalues import JsDate, as_js_date
from .memory_repo import ensure_memory_repo
from .model_handles import DEFAULT_MODEL, model_for_update, normalize_model_handle
from .profiles import DEFAULT, Profile
from .quirks import js_trim_end, sha256_hex_of_js_string
from .render_v1 import UpstreamError
from .skills_block import append_skills_for_profile

Delivery = Literal["mid-conversation", "persisted-reminder"]
ASSISTANT_REPLY = "pong"  # what upstream's DeterministicPongExecutor answers
COMPACTION_NOTE = (
    "Note: prior messages have been hidden from view due to conversation memory constraints.\n"
    "The following is a summary of the previous messages:\n "
)


def format_memory_update(compiled: CompiledPrompt) -> str:
    """Upstream `formatMidConversationMemoryUpdate`."""
    return "\n".join(
        [
            "<memory_update>",
            "The local memory filesystem has been edited and committed at revision "
            f"{compiled.memfs_revision if compiled.memfs_revision is not None else 'unknown'}.",
            "This updates part of your persona/system memory. Treat the following freshly rendered memory context "
            "as authoritative from now on; where it conflicts with earlier memory context, this newer memory context "
            "wins.",
            "",
            js_trim_end(compiled.core_memory),
            "</memory_update>",
        ]
    )


def wrap_reminder(text: str) -> str:
    """The spec's user-role reminder (chapter 9.5/9.6): `<system-reminder>` around the text."""
    return f"<system-reminder>\n{text}\n</system-reminder>"


@dataclass(frozen=True)
class Message:
    role: str
    text: str


@dataclass(frozen=True)
class ModelInput:
    """What the executor (the model) receives for one turn."""

    system_prompt: str
    mid_conversation_system_prompt: str | None
    ui_messages: tuple[Message, ...]
    history_count: int
    model: str


@dataclass(frozen=True)
class Resolved:
    """The cache's answer for a turn: the prompt record to send, and an update block if memory moved."""

    record: CompiledPrompt
    memory_update: str | None = None


@dataclass
class Conversation:
    id: str
    compiled: CompiledPrompt | None = None
    messages: list[Message] = field(default_factory=list)
    # An agent-free ("ephemeral") conversation (0.33.6+): its own raw system prompt and model, never compiled.
    agent_free: bool = False
    system: str = ""
    model: str = ""
    # A turn's run is still active (0.33.6+: its compile threw, and nothing ends the run): every later turn throws.
    active_run: str | None = None


class LocalConversations:
    """One agent's conversations over one memory repository, as upstream's local backend keeps them."""

    def __init__(
        self,
        memory_dir: str | Path,
        *,
        agent_id: str,
        system: str,
        model: str | None = DEFAULT_MODEL,
        profile: Profile = DEFAULT,
        clock: Callable[[], datetime | JsDate],
        delivery: Delivery = "mid-conversation",
        git_env: Mapping[str, str] | None = None,
        agent_name: str | None = None,
    ) -> None:
        self.memory_dir = Path(memory_dir)
        self.agent_id = agent_id
        self.agent_name = agent_name  # the author of the commit that initialises a repository without one
        self.system = system
        self.model = model_for_update(model or "", profile)  # `createAgent({model})`: as `updateAgent` stores it
        self.profile = profile
        self.clock = clock
        self.delivery = delivery
        self.git_env = git_env
        self.conversations: dict[str, Conversation] = {}
        self._sequence = 0
        self._runs = 0  # turns run, for the run ids (`local-run-N`)

    # --- the store ---------------------------------------------------------------------

    def create_conversation(self) -> Conversation:
        """A new conversation (`local-conv-N`), compiled and cached at once, as upstream does."""
        self._sequence += 1
        conversation = Conversation(f"local-conv-{self._sequence}")
        self.conversations[conversation.id] = conversation
        self.compile_and_maybe_persist(conversation, dry_run=False)
        return conversation

    def create_agent_free_conversation(self, conversation_id: str, *, system: str, model: str) -> Conversation:
        """`createEphemeralConversation` (0.33.6+): no agent, no memory, nothing compiled or cached.

        Upstream names it `local-conv-<randomUUID()>`, so the id is the caller's (the reference's). Its model is
        normalised (`createLocalConversationRecord`), with no switch to the default model: `""` stays empty, and
        its turns throw. Releases before 0.33.6 have no such conversation: it throws, as the reference driver does.
        """
        if not self.profile.agent_free_conversations:
            raise UpstreamError("this release has no createEphemeralConversation (agent-free conversations)")
        self._stamp()  # the conversation record's created_at
        conversation = Conversation(
            conversation_id, agent_free=True, system=system, model=normalize_model_handle(model, self.profile)
        )
        self.conversations[conversation.id] = conversation
        return conversation

    def update_system(self, system: str) -> None:
        """A changed raw system prompt drops the cached prompts of the agent's own conversations.

        Upstream's `clearCompiledSystemPromptsForAgent` skips conversations whose record names another
        agent, and an agent-free conversation's names its execution agent (`agent-free:<id>`), so a
        prompt compiled into one (an explicit recompile) stays cached.
        """
        if system != self.system:
            for conversation in self.conversations.values():
                if not conversation.agent_free:
                    conversation.compiled = None
        self.system = system

    def update_model(self, model: str | None) -> None:
        """`updateAgent({model})`: `""`, `auto` and `letta/...` switch to the default model; other handles are
        normalised from 0.30.28 (memfs_prompt.model_handles); null (no string) keeps the agent's model."""
        if model is not None:
            self.model = model_for_update(model, self.profile)

    def _stamp(self) -> str:
        """The clock as upstream stamps a stored record: `toISOString()`, which throws on an Invalid Date."""
        return as_js_date(self.clock()).to_iso_string()

    # --- the cache ---------------------------------------------------------------------

    def compile_and_maybe_persist(
        self, conversation: Conversation, *, dry_run: bool, previous_message_count: int | None = None
    ) -> CompiledPrompt:
        """Upstream `compileAndMaybePersistSystemPrompt`: `ensureLocalMemoryRepo` first (a repository whose HEAD
        names no commit gets one, memfs_prompt.memory_repo), then the compile; cached unless `dry_run`."""
        ensure_memory_repo(self.memory_dir, self.agent_id, self.agent_name, self.git_env, self.profile)
        compiled = compile_system_prompt(
            self.memory_dir,
            system=self.system,
            agent_id=self.agent_id,
            conversation_id=conversation.id,
            now=self.clock(),
            previous_message_count=(
                len(conversation.messages) if previous_message_count is None else previous_message_count
            ),
            profile=self.profile,
            git_env=self.git_env,
        )
        if not dry_run:
            conversation.compiled = compiled
        return compiled

    def get_or_compile(self, conversation: Conversation, previous_message_count: int) -> Resolved:
        """Upstream `getOrCompileSystemPrompt`: reuse, memory update, or full compile."""
        existing = conversation.compiled
        revision = committed_revision(self.memory_dir, self.git_env)
        if existing is not None and existing.raw_system_hash == sha256_hex_of_js_string(self.system):
            # 0.25.x reuse only a real revision (their `getMemoryHeadRevision` is null without HEAD).
            comparable = revision is not None or self.profile.lifecycle != "recompile"
            if comparable and existing.memfs_revision == revision:
                return Resolved(existing)
            if self._sends_updates():
                compiled = self.compile_and_maybe_persist(
                    conversation, dry_run=True, previous_message_count=previous_message_count
                )
                if compiled.memfs_revision == existing.memfs_revision:
                    return Resolved(existing)
                conversation.compiled = dataclasses.replace(
                    existing,
                    compiled_at=compiled.compiled_at,
                    core_memory=compiled.core_memory,
                    memfs_revision=compiled.memfs_revision,
                )
                return Resolved(existing, format_memory_update(compiled))
        compiled = self.compile_and_maybe_persist(
            conversation, dry_run=False, previous_message_count=previous_message_count
        )
        return Resolved(compiled)

    def _sends_updates(self) -> bool:
        """Whether a new revision becomes a `<memory_update>` block (else the prompt is compiled again)."""
        if self.profile.lifecycle == "update-for-models":
            return self.model in self.profile.update_models
        return self.profile.lifecycle == "update"

    # --- a turn ------------------------------------------------------------------------

    def turn(self, conversation: Conversation, text: str, client_skills: Any = None) -> ModelInput:
        """One user turn: what the model receives; the user message and the reply are stored.

        `client_skills` is the turn body's `client_skills`: its `<available_skills>` block is appended
        to the system prompt sent on this turn only (`resolveSystemPromptForTurn`).
        """
        if conversation.active_run is not None:  # 0.33.6+: the run an earlier turn started never ended
            raise UpstreamError(f"Conversation {conversation.id} already has an active run ({conversation.active_run})")
        if self.profile.turn_clock == "user-message":
            self._stamp()  # `currentLocalMessageDate()`: an Invalid Date throws before anything is stored
        conversation.messages.append(Message("user", text))
        self._runs += 1
        if self.profile.failed_turn_keeps_run:  # `startRun`; the run ends when the executor's stream does
            conversation.active_run = f"local-run-{self._runs}"
        if self.profile.turn_clock == "git-log":
            self._stamp()  # 0.25.x: the revision read's git debug line, after the message is stored
        history_count = len(conversation.messages)
        if conversation.agent_free:  # 0.33.6+: the raw prompt, never compiled; no cache, no update
            if not conversation.model:  # `agentFreeExecutionRecord`, after the message is stored and the run started
                raise UpstreamError(f"Agent-free conversation {conversation.id} has no persisted model")
            prompt, mid, model = conversation.system, None, conversation.model
        else:
            resolved = self.get_or_compile(conversation, history_count)
            prompt, mid, model = resolved.record.content, resolved.memory_update, self.model
            if mid is not None and self.delivery == "persisted-reminder":
                # Stored before the user's message, so it precedes it now and on every later turn.
                conversation.messages.insert(len(conversation.messages) - 1, Message("user", wrap_reminder(mid)))
                mid = None
        model_input = ModelInput(
            system_prompt=append_skills_for_profile(prompt, client_skills, self.profile),
            mid_conversation_system_prompt=mid,
            ui_messages=tuple(conversation.messages),
            history_count=history_count,
            model=model,
        )
        conversation.messages.append(Message("assistant", ASSISTANT_REPLY))
        conversation.active_run = None
        return model_input

    def compact(self, conversation: Conversation, summary: str) -> tuple[int, int]:
        """Compaction in mode `all`: every message is replaced by one summary message, then (0.30.28+) a full compile.

        Upstream stores the summary as a user-role `system_alert` JSON that also carries token
        estimates and a timestamp; only its role, its place and the note with the summary are
        reproduced here (the lifecycle observations compare counts, roles and facts, not its bytes).
        """
        self._stamp()  # upstream stamps the compaction before it replaces any message
        before = len(conversation.messages)
        alert = json.dumps({"type": "system_alert", "message": COMPACTION_NOTE + summary}, separators=(",", ":"))
        conversation.messages = [Message("user", alert)]
        if self.profile.recompiles_after_compaction:
            self.compile_and_maybe_persist(conversation, dry_run=False)
        return before, len(conversation.messages)

    def recompile(self, conversation: Conversation) -> CompiledPrompt:
        """An explicit recompile (`/recompile`): compiled again and cached."""
        return self.compile_and_maybe_persist(conversation, dry_run=False)
