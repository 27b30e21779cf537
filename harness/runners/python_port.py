"""The Python port (memfs_prompt), run in process."""

from __future__ import annotations

import time
from typing import Any

from harness.model import CompileRequest, LifecycleOpen, Outcome
from harness.runners.base import Runner
from memfs_prompt import compile_system_prompt
from memfs_prompt.cli import parse_now
from memfs_prompt.collation import info as collation_info
from memfs_prompt.conversation import DEFAULT_MODEL, Conversation, LocalConversations, ModelInput
from memfs_prompt.profiles import Profile
from memfs_prompt.render_v1 import UpstreamError
from memfs_prompt.skills_block import append_skills_for_profile


class PythonPortRunner(Runner):
    def __init__(self, profile: Profile, git_env: dict[str, str] | None = None) -> None:
        self.profile = profile
        self.git_env = git_env
        self.name = f"python:{profile.name}"
        self._agent: LocalConversations | None = None
        self._conversation: Conversation | None = None
        self._now = ""

    def compile(self, request: CompileRequest) -> Outcome:
        started = time.perf_counter()
        try:
            record = compile_system_prompt(
                request.memory_dir,
                system=request.system,
                agent_id=request.agent_id,
                conversation_id=request.conversation_id,
                now=parse_now(request.now),
                previous_message_count=request.previous_message_count,
                include_memfs=request.include_memfs,
                profile=self.profile,
                git_env=self.git_env,
            )
        except UpstreamError as error:
            return Outcome("thrown", thrown=str(error), elapsed_ms=_ms(started))
        except Exception as error:  # a port crash is an error of this case, not of the run
            return Outcome("error", error=f"{type(error).__name__}: {error}", elapsed_ms=_ms(started))
        answer = record.to_json()
        if request.client_skills is not None:  # the turn's prompt, as the reference's compile answers it
            answer["systemPromptWithSkills"] = append_skills_for_profile(
                record.content, request.client_skills.value, self.profile
            )
        return Outcome("ok", record=answer, elapsed_ms=_ms(started))

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        self._now = request.now
        try:
            self._agent = LocalConversations(
                request.memory_dir,
                agent_id=request.agent_id or "agent-local-00000000-0000-4000-8000-000000000001",
                system=request.system,
                model=request.model or DEFAULT_MODEL,
                profile=self.profile,
                clock=lambda: parse_now(self._now),
                delivery=request.delivery,  # type: ignore[arg-type]
                git_env=self.git_env,
            )
            self._conversation = self._agent.create_conversation()
        except Exception as error:
            return Outcome("error", error=f"{type(error).__name__}: {error}")
        opened = {"agentId": self._agent.agent_id, "conversationId": self._conversation.id, "model": self._agent.model}
        return Outcome("ok", record={"opened": opened, "compiled": _compiled(self._conversation)})

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        agent, conversation = self._agent, self._conversation
        if agent is None or conversation is None:
            return Outcome("error", error="no open lifecycle session")
        self._now = step.get("now") or self._now
        observed: dict[str, Any] = {}
        try:
            kind = step["kind"]
            if kind == "turn":
                observed["executed"] = _executed(agent.turn(conversation, step["text"], step.get("clientSkills")))
            elif kind == "system":
                agent.update_system(step["system"])
            elif kind == "model":
                agent.update_model(step["model"])
                observed["model"] = agent.model
            elif kind == "new_conversation":
                conversation = self._conversation = agent.create_conversation()
            elif kind == "agent_free_conversation":  # the id is the reference's choice (harness.lifecycle)
                conversation = self._conversation = agent.create_agent_free_conversation(
                    step.get("conversationId") or AGENT_FREE_ID,
                    system=step.get("system") or "",
                    model=step.get("model") or DEFAULT_MODEL,
                )
                observed["agentFree"] = {"conversationId": conversation.id}
            elif kind == "recompile":
                agent.recompile(conversation)
            elif kind == "compact":
                before, after = agent.compact(conversation, COMPACTION_SUMMARY)
                observed["compacted"] = {"before": before, "after": after}
            else:
                return Outcome("error", error=f"the Python port has no lifecycle step {kind!r}")
        except UpstreamError as error:
            return Outcome("thrown", thrown=str(error))
        except Exception as error:
            return Outcome("error", error=f"{type(error).__name__}: {error}")
        observed.update(
            conversationId=conversation.id,
            compiled=_compiled(conversation),
            stored=[{"role": m.role, "text": m.text} for m in conversation.messages],
        )
        return Outcome("ok", record=observed)

    def lifecycle_close(self) -> None:
        self._agent = self._conversation = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "implementation": "memfs_prompt (in process)", "profile": self.profile.name,
                "collation": collation_info()}  # fmt: skip


COMPACTION_SUMMARY = "conversation summary"  # what reference/driver.mjs's summariser answers
AGENT_FREE_ID = "local-conv-00000000-0000-4000-8000-000000000001"  # when no reference chose one (golden probes)


def _compiled(conversation: Conversation) -> dict[str, Any] | None:
    return conversation.compiled.to_json() if conversation.compiled else None


def _executed(model_input: ModelInput) -> dict[str, Any]:
    return {
        "systemPrompt": model_input.system_prompt,
        "midConversationSystemPrompt": model_input.mid_conversation_system_prompt,
        "uiMessages": [{"role": m.role, "text": m.text} for m in model_input.ui_messages],
        "historyCount": model_input.history_count,
        "model": model_input.model,
    }


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
