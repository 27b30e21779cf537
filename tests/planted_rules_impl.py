"""A protocol implementation with planted rule bugs: `python tests/planted_rules_impl.py [--bugs a,b]`.

It runs the real `python -m memfs_prompt serve` loop (memfs_prompt.serve) with four of upstream's rules
broken the way a port in another language commonly breaks them (BUGS):

- `trim`: JavaScript's `String.prototype.trim` replaced by Python's `str.strip()` (which strips U+0085 and
  U+001C..U+001F but keeps U+FEFF) wherever the compiler, the renderers and the frontmatter parser trim;
- `collation`: memory labels sorted by code point (Python's `str` order) instead of ICU root collation, as
  bun's `localeCompare` sorts them (the compiler and both renderers);
- `bom`: a leading byte order mark left in place before the frontmatter is matched
  (`frontmatter.normalize_newlines` keeps it), so a file starting with a BOM has no frontmatter;
- `view-name-order`: the Memory tool's view (op memory_view) lists a directory's entries by name only, with no
  edit times (no git log, no mtimes), as a port that skips upstream's `lastEditedByChild` would.
- `noop-commit`: the memory write tool commits a write that changed nothing (an empty commit, answered as a
  commit) where upstream skips it (0.25.x) or throws (0.30.28 to 0.33.2): the staged paths always look changed.
- `yaml-validator`: the commit validator (op validate) reads frontmatter as a YAML parser would, each line's
  CR dropped before the fences are matched, so it accepts CRLF frontmatter the bash hook refuses.
- `read-only-no-head`: the commit validator's read_only checks never see HEAD (no previous content), so a file
  HEAD locks can be edited and read_only is always "set".
- `agent-info-repeated`: a lifecycle turn's agent-info reminder on every turn of a conversation, not only its first
  (the reminder state never records it as sent).
- `reminder-same-turn`: the post-turn memory sync run before the turn instead of after it, so a dirty or conflicted
  repository's reminder reaches the model on the turn it is found, not the next.
- `model-auto-stored`: a model step (or an agent created) naming `auto` stores `auto`, where upstream's
  `shouldUseDefaultLocalModel` switches to the default model (`""` and `letta/...` still switch).

`--bugs` plants only some of them (for the suite's tests of attribution). Its hello names them in
`info.plantedBugs`: `--impl "cmd:python tests/planted_rules_impl.py"` is the suite's check that a failure
is explained by the rule the implementation breaks, each planted bug named as its rule.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memfs_prompt import (
    commit_validation,
    compiler,
    frontmatter,
    memory_view,
    memory_write,
    model_handles,
    protocol,
    render_v1,
    render_v2,
    serve,
    turn_reminders,
)
from memfs_prompt.profiles import DEFAULT, resolve_profile


def python_strip(value: str) -> str:
    """The trim bug: Python's whitespace set, not JavaScript's."""
    return value.strip()


def code_point_key(value: str) -> str:
    """The collation bug: a label's code points as its sort key."""
    return value


def keep_bom(content: str) -> str:
    """The BOM bug: CRLF and lone CR made LF, but a leading U+FEFF kept."""
    return content.replace("\r\n", "\n").replace("\r", "\n")


def no_edit_times(directory: str, names: list[str], env: object) -> dict[str, float]:
    """The view bug: every entry edited at time 0, so the tie-break (the name) is the whole order."""
    return {}


def _trim() -> None:
    for module in (compiler, frontmatter, render_v1, render_v2):  # each imported `js_trim` by name
        module.js_trim = python_strip  # type: ignore[attr-defined]


def _collation() -> None:
    for module in (compiler, render_v1, render_v2):  # each imported `locale_compare_key` by name
        module.locale_compare_key = code_point_key  # type: ignore[attr-defined]


def _bom() -> None:
    frontmatter.normalize_newlines = keep_bom  # type: ignore[assignment]


def _view_name_order() -> None:
    memory_view.last_edited_by_child = no_edit_times  # type: ignore[assignment]


def _noop_commit() -> None:
    real = memory_write._git

    def git(tool: memory_write._Tool, *args: str) -> str:
        if args[:3] == ("status", "--porcelain", "--"):  # the staged paths always look changed
            return real(tool, *args) or " M (planted)\n"
        if "commit" in args:
            args = (*args, "--allow-empty")
        return real(tool, *args)

    memory_write._git = git  # type: ignore[assignment]


def _yaml_validator() -> None:
    bash_lines, node_errors = commit_validation._lines, commit_validation.frontmatter_errors

    def lines(text: str) -> list[str]:
        return [line.removesuffix("\r") for line in bash_lines(text)]

    def errors(path: str, content: str, previous: str | None, fmt: str) -> list[str]:
        return node_errors(path, content.replace("\r\n", "\n"), previous, fmt)

    commit_validation._lines = lines  # type: ignore[assignment]
    commit_validation.frontmatter_errors = errors  # type: ignore[assignment]


def _read_only_no_head() -> None:
    real = commit_validation._Hook.git

    def git(hook: commit_validation._Hook, *args: str, quiet: bool = False) -> tuple[int, bytes]:
        if args[:1] == ("show",) and args[1].startswith("HEAD:"):  # HEAD's version is never found
            return 128, b""
        return real(hook, *args, quiet=quiet)

    commit_validation._Hook.git = git  # type: ignore[method-assign]


def _agent_info_repeated() -> None:
    real = turn_reminders.TurnReminders.build

    def build(
        state: turn_reminders.TurnReminders, agent: turn_reminders.AgentInfo, conversation_id: str, memory_dir: Path
    ) -> list[tuple[str, str]]:
        applied = real(state, agent, conversation_id, memory_dir)
        state.has_sent_agent_info = False  # never recorded as sent
        return applied

    turn_reminders.TurnReminders.build = build  # type: ignore[method-assign]


def _reminder_same_turn() -> None:
    real_step, real_sync = protocol.Server._run_step, turn_reminders.TurnReminders.after_turn

    def run_step(
        server: protocol.Server, session: protocol._Session, step: dict[str, object], kind: str
    ) -> dict[str, object]:
        reminders = session.turn_reminders(session.conversation) if kind == "turn" else None
        if reminders is not None:  # the sync before the turn's reminders are built
            real_sync(reminders, session.agent.memory_dir, session.agent.profile, server.git_env)
        return real_step(server, session, step, kind)

    protocol.Server._run_step = run_step  # type: ignore[method-assign]
    turn_reminders.TurnReminders.after_turn = lambda *args: None  # type: ignore[method-assign]


def _model_auto_stored() -> None:
    def uses_default_model(model: str) -> bool:  # `auto` left out: stored as it is
        return model == "" or model.startswith("letta/")

    model_handles.uses_default_model = uses_default_model  # type: ignore[assignment]


BUGS: dict[str, tuple[str, Callable[[], None]]] = {
    "trim": ("JavaScript's trim replaced by Python's str.strip()", _trim),
    "collation": ("memory labels sorted by code point, not by ICU collation (localeCompare)", _collation),
    "bom": ("a leading BOM is not stripped before the frontmatter is matched", _bom),
    "view-name-order": ("the Memory tool's view lists entries by name only (no edit times)", _view_name_order),
    "noop-commit": ("the memory write tool commits a write that changed nothing", _noop_commit),
    "yaml-validator": (
        "the commit validator reads CRLF frontmatter as YAML does (the bash hook refuses it)",
        _yaml_validator,
    ),
    "read-only-no-head": ("the commit validator's read_only checks ignore HEAD", _read_only_no_head),
    "agent-info-repeated": (
        "the agent-info reminder on every turn, not only a conversation's first",
        _agent_info_repeated,
    ),
    "reminder-same-turn": (
        "the post-turn memory sync runs before the turn, so its reminder comes a turn early",
        _reminder_same_turn,
    ),
    "model-auto-stored": ("a model named `auto` is stored as it is, not switched to the default", _model_auto_stored),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/planted_rules_impl.py", description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default=DEFAULT.name, help="the profile of requests that name none")
    parser.add_argument("--bugs", default=",".join(BUGS), help=f"the bugs to plant, comma-separated: {', '.join(BUGS)}")
    args = parser.parse_args(argv)
    chosen = [name for name in args.bugs.split(",") if name]
    unknown = [name for name in chosen if name not in BUGS]
    if unknown:
        parser.error(f"unknown bug {unknown[0]!r}: choose from {', '.join(BUGS)}")
    for name in chosen:
        BUGS[name][1]()
    info = {
        "implementation": "memfs_prompt with planted rule bugs (tests/planted_rules_impl.py)",
        "plantedBugs": {name: BUGS[name][0] for name in chosen},
    }
    return serve.main(resolve_profile(args.profile), info=info)


if __name__ == "__main__":
    sys.exit(main())
