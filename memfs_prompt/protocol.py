"""The port's side of the conformance protocol (docs/protocol.md, reference/protocol.schema.json), over dicts.

`Server.handle(request) -> answer` answers one request as reference/driver.mjs answers it, and keeps
the open lifecycle sessions. `python -m memfs_prompt serve` (memfs_prompt.serve) puts it on stdin and
stdout; the harness's in-process runner (harness/runners/python_port.py) calls it directly, so both
go through this one code path.

Answers: `{"id", "ok": true, ...}`; `{"id", "ok": false, "error"}` for a bad request or a failure
to run; `{"id", "ok": false, "unsupported"}` for an op, profile or input this port does not serve.
Where upstream throws, the answer is ok with `thrown` (UpstreamError's message).
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .collation import info as collation_info
from .commit_validation import NotPorted, validate_staged
from .compiler import compile_system_prompt
from .conversation import Conversation, Delivery, LocalConversations, ModelInput
from .jsvalues import JsDate, parse_js_date
from .memory_reminders import memory_reminder_record
from .memory_view import memory_view
from .memory_write import DEFAULT_AGENT_ID as WRITE_AGENT_ID
from .memory_write import WriteCall, memory_write
from .model_handles import DEFAULT_MODEL
from .profiles import DEFAULT, PROFILES, Profile, resolve_profile
from .render_v1 import UpstreamError
from .skills_block import append_skills_for_profile, compile_available_skills_block
from .turn_reminders import AgentInfo, TurnReminders, prepend
from .turn_reminders import observed as reminders_observed

PROTOCOL_VERSION = 1
OPS = (
    "hello",
    "compile",
    "skills_block",
    "lifecycle_open",
    "lifecycle_step",
    "lifecycle_close",
    "memory_view",
    "memory_write",
    "memory_reminder",
    "validate",
)
# The layout features (the feature rules of cases/rules.yaml) this port implements, declared in hello.
FEATURES = ("memfs-v1", "memfs-v2", "skills-block", "client-skills", "metadata-block", "memory-update")
DELIVERIES: tuple[Delivery, ...] = ("mid-conversation", "persisted-reminder")
STEP_KINDS = (
    "turn",
    "system",
    "model",
    "new_conversation",
    "agent_free_conversation",
    "recompile",
    "compact",
    "conversation",
)

# The ids the port uses where upstream's store would draw them from randomUUID (counted from 1, as the
# driver's hook does) and the request names none.
DEFAULT_AGENT_ID = "agent-local-00000000-0000-4000-8000-000000000001"
AGENT_FREE_ID = "local-conv-00000000-0000-4000-8000-000000000001"
COMPACTION_SUMMARY = "conversation summary"  # what reference/driver.mjs's summariser answers
AGENT_NAME = "conformance"  # the name reference/driver.mjs creates its agent with (`createAgent({name})`)


class BadRequest(Exception):
    """The request cannot be served as written: answered `ok: false, error`."""


class Unsupported(Exception):
    """The request names something this port does not serve: answered `ok: false, unsupported`."""


@dataclass
class _Clock:
    """A session's clock: `now` as `new Date(now)` reads it; a step's `now` moves it."""

    now: str

    def __call__(self) -> JsDate:
        return parse_js_date(self.now)  # `new Date(now)`, as memfs_prompt.cli.parse_now


@dataclass
class _Session:
    agent: LocalConversations
    conversation: Conversation
    clock: _Clock
    created: list[Conversation] = field(default_factory=list)  # in creation order: a `conversation` step's index
    # each agent conversation's client-loop reminder state (memfs_prompt.turn_reminders), made at its first turn
    reminders: dict[str, TurnReminders] = field(default_factory=dict)

    def turn_reminders(self, conversation: Conversation) -> TurnReminders | None:
        """The conversation's reminder state, or None where a turn carries no reminders: an agent-free
        conversation (no agent to describe), a release with no post-turn sync (before 0.30.28)."""
        if conversation.agent_free or not self.agent.profile.memory_reminders:
            return None
        return self.reminders.setdefault(conversation.id, TurnReminders())

    def use(self, conversation: Conversation) -> None:
        """A conversation the session created: later steps use it."""
        self.created.append(conversation)
        self.conversation = conversation


class Server:
    """One protocol endpoint: `profile` serves requests that name none; `git_env` is the git processes'
    environment (None: inherited); `info` joins hello's `info`."""

    def __init__(
        self,
        profile: Profile = DEFAULT,
        git_env: Mapping[str, str] | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        self.profile = profile
        self.git_env = git_env
        self.info = dict(info or {})
        self.sessions: dict[str, _Session] = {}
        self._ops: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "hello": self._hello,
            "compile": self._compile,
            "skills_block": self._skills_block,
            "lifecycle_open": self._lifecycle_open,
            "lifecycle_step": self._lifecycle_step,
            "lifecycle_close": self._lifecycle_close,
            "memory_view": self._memory_view,
            "memory_write": self._memory_write,
            "memory_reminder": self._memory_reminder,
            "validate": self._validate,
        }

    def handle(self, request: Any) -> dict[str, Any]:
        """The answer to one request (a parsed JSON value); never raises."""
        if not isinstance(request, dict):
            return {"id": None, "ok": False, "error": "request is not a JSON object"}
        request_id = request.get("id")
        op = request.get("op")
        if not isinstance(op, str):
            return {"id": request_id, "ok": False, "error": "request has no op (a string)"}
        run = self._ops.get(op)
        if run is None:
            return {"id": request_id, "ok": False, "unsupported": f"op {json.dumps(op, ensure_ascii=False)}"}
        try:
            result = run(request)
        except Unsupported as what:
            return {"id": request_id, "ok": False, "unsupported": str(what)}
        except BadRequest as error:
            return {"id": request_id, "ok": False, "error": str(error)}
        except Exception as error:  # a port crash is an error of this request, not of the server
            return {"id": request_id, "ok": False, "error": f"{type(error).__name__}: {error}"}
        return {"id": request_id, "ok": True, **result}

    # --- ops -------------------------------------------------------------------------------------

    def _hello(self, request: dict[str, Any]) -> dict[str, Any]:
        profiles = list(PROFILES) + ([] if self.profile.name in PROFILES else [self.profile.name])
        info = {
            "implementation": "memfs_prompt",
            "python": platform.python_version(),
            "defaultProfile": self.profile.name,
            "collation": collation_info(),  # the ICU and Unicode versions its labels sort by
            **self.info,
        }
        return {
            "protocol": PROTOCOL_VERSION,
            "capabilities": {"ops": list(OPS), "lifecycle": True, "profiles": profiles, "features": list(FEATURES)},
            "info": info,
        }

    def _compile(self, request: dict[str, Any]) -> dict[str, Any]:
        profile = self._profile_of(request)
        count = request.get("previousMessageCount")
        if count is None:
            count = 0  # `request.previousMessageCount ?? 0`
        if isinstance(count, bool) or not isinstance(count, int | float):
            raise BadRequest("previousMessageCount must be a number")
        include_memfs = request.get("includeMemfs")
        if include_memfs is not None and not isinstance(include_memfs, bool):
            raise BadRequest("includeMemfs must be true or false")
        try:
            record = compile_system_prompt(
                _string(request, "memoryDir"),
                system=_string(request, "system"),
                agent_id=_string(request, "agentId"),
                conversation_id=_string(request, "conversationId"),
                now=parse_js_date(_string(request, "now")),
                previous_message_count=count,
                include_memfs=include_memfs is not False,
                profile=profile,
                git_env=self.git_env,
            )
        except UpstreamError as error:
            return {"thrown": str(error)}
        answer: dict[str, Any] = {"record": record.to_json()}
        if "clientSkills" in request:  # null and non-arrays are given values too (they count as [])
            answer["systemPromptWithSkills"] = append_skills_for_profile(
                record.content, request["clientSkills"], profile
            )
        return answer

    def _skills_block(self, request: dict[str, Any]) -> dict[str, Any]:
        profile = self._profile_of(request)
        skills = request.get("clientSkills")
        prompt = request.get("systemPrompt")
        if prompt is not None and not isinstance(prompt, str):
            raise BadRequest("systemPrompt must be a string")
        block = compile_available_skills_block(
            skills, profile.skills_block, pragma_latin1_literals=profile.pragma_latin1_literals
        )
        return {"block": block, "appended": append_skills_for_profile(prompt or "", skills, profile)}

    def _lifecycle_open(self, request: dict[str, Any]) -> dict[str, Any]:
        name = _session_name(request)
        if name in self.sessions:
            raise BadRequest(f"session {name} is already open")
        profile = self._profile_of(request)
        delivery = request.get("delivery") or "mid-conversation"
        if delivery not in DELIVERIES:
            raise Unsupported(f"delivery {json.dumps(delivery, ensure_ascii=False)} (served: {', '.join(DELIVERIES)})")
        agent_id, model = request.get("agentId"), request.get("model")
        for key, value in (("agentId", agent_id), ("model", model)):
            if value is not None and not isinstance(value, str):
                raise BadRequest(f"{key} must be a string or null")
        clock = _Clock(_string(request, "now"))
        agent = LocalConversations(
            _string(request, "memoryDir"),
            agent_id=agent_id or DEFAULT_AGENT_ID,
            system=_string(request, "system"),
            model=model,
            profile=profile,
            clock=clock,
            delivery=delivery,
            git_env=self.git_env,
            agent_name=AGENT_NAME,
        )
        try:
            conversation = agent.create_conversation()
        except UpstreamError as error:  # upstream could not open (a `.git` file): no session, as the driver
            return {"thrown": str(error)}
        self.sessions[name] = _Session(agent, conversation, clock, [conversation])
        opened = {"agentId": agent.agent_id, "conversationId": conversation.id, "model": agent.model}
        return {"opened": opened, "compiled": _compiled(conversation)}

    def _lifecycle_step(self, request: dict[str, Any]) -> dict[str, Any]:
        name = _session_name(request)
        session = self.sessions.get(name)
        if session is None:
            raise BadRequest(f"no open session {name}")
        step = request.get("step")
        if not isinstance(step, dict):
            raise BadRequest("step must be an object")
        session.clock.now = step.get("now") or session.clock.now
        kind = step.get("kind")
        if kind not in STEP_KINDS:
            raise BadRequest(f"the Python port has no lifecycle step {kind!r}")
        index = step.get("index")
        if kind == "conversation" and not (type(index) is int and 1 <= index <= len(session.created)):
            raise BadRequest(f"no conversation {json.dumps(index)}: this session created {len(session.created)}")
        try:
            observed = self._run_step(session, step, kind)
        except UpstreamError as error:
            return {"thrown": str(error)}
        conversation = session.conversation
        observed.update(
            conversationId=conversation.id,
            compiled=_compiled(conversation),
            stored=[{"role": m.role, "text": m.text} for m in conversation.messages],
        )
        return {"observed": observed}

    def _run_step(self, session: _Session, step: dict[str, Any], kind: str) -> dict[str, Any]:
        agent, conversation = session.agent, session.conversation
        observed: dict[str, Any] = {}
        if kind == "turn":
            reminders = session.turn_reminders(conversation)
            if reminders is None:
                observed["executed"] = _executed(agent.turn(conversation, step["text"], step.get("clientSkills")))
                return observed
            applied = reminders.build(AgentInfo(agent.agent_id, AGENT_NAME), conversation.id, agent.memory_dir)
            try:  # the post-turn sync runs in the loop's `finally`, whether or not the turn threw
                model_input = agent.turn(conversation, prepend(applied, step["text"]), step.get("clientSkills"))
            finally:
                reminders.after_turn(agent.memory_dir, agent.profile, self.git_env)
            observed["executed"] = _executed(model_input)
            observed["reminders"] = reminders_observed(applied, agent.memory_dir)
        elif kind == "system":
            agent.update_system(step["system"])
        elif kind == "model":
            agent.update_model(step["model"])
            observed["model"] = agent.model
        elif kind == "new_conversation":
            session.use(agent.create_conversation())
        elif kind == "agent_free_conversation":  # the id is the reference's choice (harness.run.lifecycle)
            session.use(
                agent.create_agent_free_conversation(
                    step.get("conversationId") or AGENT_FREE_ID,
                    system=step.get("system") or "",
                    model=_agent_free_model(step),
                )
            )
            observed["agentFree"] = {"conversationId": session.conversation.id}
        elif kind == "conversation":  # back to one it created: no store call, as a client keeping its id
            session.conversation = session.created[step["index"] - 1]
        elif kind == "recompile":
            agent.recompile(conversation)
        else:  # compact
            before, after = agent.compact(conversation, COMPACTION_SUMMARY)
            observed["compacted"] = {"before": before, "after": after}
        return observed

    def _lifecycle_close(self, request: dict[str, Any]) -> dict[str, Any]:
        self.sessions.pop(_session_name(request), None)
        return {"closed": True}

    def _memory_view(self, request: dict[str, Any]) -> dict[str, Any]:
        profile = self._profile_of(request)
        if not profile.memory_view:
            raise Unsupported(f"profile {profile.name} has no Memory view tool (it appears in letta-code 0.34.7)")
        try:
            return {"view": memory_view(_string(request, "memoryDir"), _string(request, "path"), profile, self.git_env)}
        except UpstreamError as error:
            return {"thrown": str(error)}

    def _memory_write(self, request: dict[str, Any]) -> dict[str, Any]:
        profile = self._profile_of(request)
        if not profile.memory_write:
            raise Unsupported(f"{profile.name} has no memory write tool (letta-code 0.33.3 removed it)")
        args = request.get("args")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise BadRequest("args must be an object")
        agent_id, agent_name = request.get("agentId"), request.get("agentName")
        for key, value in (("agentId", agent_id), ("agentName", agent_name)):
            if value is not None and not isinstance(value, str):
                raise BadRequest(f"{key} must be a string or null")
        sync_mode = request.get("syncMode")
        if sync_mode not in (None, "local", "remote"):
            raise BadRequest('syncMode must be "local", "remote" or null')
        call = WriteCall(
            _string(request, "memoryDir"),
            _string(request, "command"),
            args,
            WRITE_AGENT_ID if agent_id is None else agent_id,
            agent_name,
            sync_mode or "local",
        )
        try:
            return {"written": memory_write(call, profile, self.git_env)}
        except UpstreamError as error:
            return {"thrown": str(error)}
        except NotImplementedError as error:
            raise Unsupported(f"the port does not reproduce {error}") from None

    def _memory_reminder(self, request: dict[str, Any]) -> dict[str, Any]:
        """The post-turn memory sync of a local memory repository (memfs_prompt.memory_reminders)."""
        profile = self._profile_of(request)
        if not profile.memory_reminders:
            raise Unsupported(f"profile {profile.name} has no post-turn memory sync (letta-code 0.30.28+)")
        try:
            return memory_reminder_record(_string(request, "memoryDir"), profile, self.git_env)
        except UpstreamError as error:
            return {"thrown": str(error)}

    # --- fields ----------------------------------------------------------------------------------

    def _validate(self, request: dict[str, Any]) -> dict[str, Any]:
        """The staged change of `memoryDir` against HEAD through the profile's pre-commit hook."""
        profile = self._profile_of(request)
        try:
            validation = validate_staged(Path(_string(request, "memoryDir")), profile, self.git_env)
        except NotPorted as what:
            raise Unsupported(str(what)) from None
        return {"validation": validation.to_wire()}

    def _profile_of(self, request: dict[str, Any]) -> Profile:
        """The request's `profile` (a profile name, or `letta-code@<release>`), or the server's when absent."""
        name = request.get("profile")
        if name is None or name == self.profile.name:
            return self.profile
        if not isinstance(name, str):
            raise BadRequest("profile must be a string (a profile name)")
        try:
            return resolve_profile(name)
        except KeyError:
            raise Unsupported(f"profile {json.dumps(name, ensure_ascii=False)}") from None


def _string(request: dict[str, Any], key: str) -> str:
    value = request.get(key)
    if not isinstance(value, str):
        raise BadRequest(f"{key} must be a string" + ("" if key in request else " (it is missing)"))
    return value


def _agent_free_model(step: dict[str, Any]) -> str:
    """The step's `model` (`""` included: upstream's driver sends `step.model ?? "openai/gpt-5.5"`)."""
    model = step.get("model")
    if model is None:
        return DEFAULT_MODEL
    if not isinstance(model, str):
        raise BadRequest("model must be a string or null")
    return model


def _session_name(request: dict[str, Any]) -> str:
    name = request.get("session")
    if not isinstance(name, str):
        raise BadRequest("session must be a string")
    return name


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
