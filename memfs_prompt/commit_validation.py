"""Which commits upstream accepts into a memory repository: its pre-commit hook, release by release.

Upstream installs a bash pre-commit hook (`PRE_COMMIT_HOOK_SCRIPT`, src/agent/memoryGit.ts in 0.25.x,
src/agent/memory-git-hooks.ts later) and every commit it makes runs it; a refusal is the commit's failure. This
module owns those rules, each written once and chosen by `Profile.commit_hook`:

- `legacy` (0.25.3 to 0.30.28): staged `.md` files under `system/` and `reference/` (optionally `memory/`-prefixed)
  need frontmatter with a non-empty `description`, only `description read_only limit`, and no change to
  `read_only`; a file whose HEAD says `read_only: true` cannot change; flat skill files are refused.
- `policy-bash` (0.31.12): the layout policy file in the git dir (`letta-memory-layout-policy`: `legacy-only`,
  `root-marker`, `shared-memory`) picks those checks or the v2 ones (every projected `.md` of the index: `name`
  and `description`, MEMORY.md without frontmatter), still in bash; `.memfs.config.json` adds constraints.
- `policy-node` (0.32.8+): the same bash picks the files, node runs `validateMemoryFileFrontmatter`
  (src/memory-frontmatter.ts) on each, and a v2 root also runs the tree constraints (every directory's
  MEMORY.md index, depth, characters: `validateMemoryTreeConstraints`, src/memory-constraints.ts).
- `node-tree` (0.34.1+): node lists the v2 tree itself (`git ls-files -z`, names unquoted).

Being bash, the hook's edges are the rules too, and are reproduced: names split on whitespace and
glob-expanded (`for file in $(git diff ...)`), git's quoted names, values read with `cut`/`sed` (spaces
trimmed, tabs and CRs kept), indented lines skipped, `$(...)` dropping trailing newlines, `echo -e` reading
backslashes in the messages. The git commands the hook runs are run here too (their stderr is part of what
the hook prints). The answer is a `Validation`: accepted (the hook's exit status is 0) and the lines it
printed, in order, as git shows them (the hook's stdout goes to git's stderr). Two callers: the protocol's
`validate` op and the initial commit of a lifecycle turn (memfs_prompt.memory_repo).

Not ported: a `.memfs.config.json` in the index or HEAD (its limits, globs and read-only files):
`NotPorted`, which the protocol answers `unsupported`.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .git_command import run_git
from .profiles import Profile

POLICY_FILE = "letta-memory-layout-policy"
CONFIG_PATH = ".memfs.config.json"
LEGACY_KEYS = ("description", "read_only", "limit")
V2_KEYS = ("name", "description")
SYSTEM_OR_REFERENCE = re.compile(r"^(memory/)?(system|reference)/.*\.md$")
COULD_NOT_READ = "Memory validation could not read Git contents. No files were committed."
# DEFAULT_MEMORY_CONSTRAINTS_CONFIG (src/memory-constraints.ts)
DEFAULT_MAX_DEPTH = 2
DEFAULT_MAX_FILE_CHARACTERS = 20000
DEFAULT_MAX_CORE_CHARACTERS = 65536


class NotPorted(Exception):
    """A repository whose validation the port does not reproduce (answered `unsupported`)."""


@dataclass(frozen=True)
class Validation:
    """The hook's verdict: `accepted` (exit status 0) and what it printed, line by line."""

    accepted: bool
    messages: tuple[str, ...]

    def to_wire(self) -> dict[str, object]:
        return {"accepted": self.accepted, "messages": list(self.messages)}


class _HookExit(Exception):
    """`exit N` inside the hook."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


@dataclass
class _Hook:
    """One run of the hook: the work tree git runs it in, its environment, and what it has printed so far."""

    cwd: Path
    env: Mapping[str, str] | None
    policy: str | None = None  # the policy file's text when the caller has just written it (None: read it)
    printed: list[str] = field(default_factory=list)  # text, in order (stdout and stderr share git's stderr)

    def git(self, *args: str, quiet: bool = False) -> tuple[int, bytes]:
        """A git command of the hook: its status and stdout; its stderr printed unless sent to /dev/null."""
        done = run_git(self.cwd, self.env, *args)
        if done.stderr and not quiet:
            self.printed.append(done.stderr.decode("utf-8", "surrogateescape"))
        return done.returncode, done.stdout

    def exists(self, spec: str) -> bool:
        """`git cat-file -e SPEC 2>/dev/null`."""
        return self.git("cat-file", "-e", spec, quiet=True)[0] == 0

    def show(self, spec: str, quiet: bool = False) -> str:
        """`$(git show SPEC)`: stdout with trailing newlines (and NUL bytes) dropped, as bash keeps it."""
        return _substitution(self.git("show", spec, quiet=quiet)[1])

    def echo(self, text: str) -> None:
        self.printed.append(text + "\n")


def validate_staged(
    work_tree: Path, profile: Profile, env: Mapping[str, str] | None = None, policy: str | None = None
) -> Validation:
    """Upstream's pre-commit hook of `profile` on the index of the repository at `work_tree`, against HEAD.
    `policy`: the layout policy the hook reads (None: the git dir's policy file, as it is)."""
    hook = _Hook(work_tree, env, policy)
    if hook.exists(f":{CONFIG_PATH}") or hook.exists(f"HEAD:{CONFIG_PATH}"):
        raise NotPorted(f"{CONFIG_PATH} constraints (limits, globs, readOnlyFiles) are not ported")
    try:
        status = _legacy_hook(hook, node=False) if profile.commit_hook == "legacy" else _policy_hook(hook, profile)
    except _HookExit as done:
        status = done.status
    text = "".join(hook.printed).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return Validation(status == 0, tuple(lines))


# --- bash: what the shell does to the values the hook handles --------------------------------------------


def _substitution(stdout: bytes) -> str:
    """`$(...)`: NUL bytes dropped, trailing newlines removed (bytes kept as surrogate escapes)."""
    return stdout.replace(b"\0", b"").decode("utf-8", "surrogateescape").rstrip("\n")


def _echo_out(text: str) -> str:
    """`echo "$text"`: a lone argument made only of echo's options (`-n`, `-e`, `-neE`...) prints nothing."""
    if re.fullmatch(r"-[neE]+", text):
        return "" if "n" in text else "\n"
    return text + "\n"


def _lines(text: str) -> list[str]:
    """`echo "$text" | ...`: the lines a filter reads."""
    out = _echo_out(text)
    return out[:-1].split("\n") if out.endswith("\n") else (out.split("\n") if out else [])


_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _echo_e(text: str) -> str:
    r"""`echo -e "$text"`: bash's escapes (`\n`, `\t`, `\\`, `\0nnn`, `\xHH`, `\c` ends the output), then a newline."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if char != "\\" or not nxt:
            out.append(char)
            i += 1
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt == "\\":
            out.append("\\")
            i += 2
        elif nxt == "c":
            return "".join(out)
        elif nxt == "0":
            digits = re.match(r"[0-7]{0,3}", text[i + 2 :])
            assert digits is not None
            out.append(_byte(int(digits.group() or "0", 8) & 0xFF))
            i += 2 + len(digits.group())
        elif nxt == "x" and re.match(r"[0-9A-Fa-f]", text[i + 2 : i + 3]):
            digits = re.match(r"[0-9A-Fa-f]{1,2}", text[i + 2 :])
            assert digits is not None
            out.append(_byte(int(digits.group(), 16)))
            i += 2 + len(digits.group())
        else:
            out.append(char)
            i += 1
    return "".join(out) + "\n"


def _byte(value: int) -> str:
    """One byte echo wrote, as this module keeps bytes: ASCII as itself, others as surrogate escapes."""
    return chr(value) if value < 0x80 else chr(0xDC00 + value)


def _words(text: str, cwd: Path) -> list[str]:
    """`for file in $(...)`: split on spaces, tabs and newlines, then each word with `*?[` glob-expanded in the work
    tree (sorted; a word matching nothing is kept)."""
    words: list[str] = []
    for word in text.split():
        if any(c in word for c in "*?[") and (found := sorted(glob.glob(word, root_dir=cwd))):
            words.extend(found)
        else:
            words.append(word)
    return words


def _grep(lines: list[str], pattern: re.Pattern[str]) -> list[str]:
    return [line for line in lines if pattern.search(line)]


def _staged_names(hook: _Hook, diff_filter: str) -> list[str]:
    """`git diff --cached --name-only --diff-filter=F` as lines (names git quotes stay quoted)."""
    out = hook.git("diff", "--cached", "--name-only", f"--diff-filter={diff_filter}")[1]
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _flat_skills(hook: _Hook, pattern: str) -> str:
    """The flat-skill refusals: `skills/<name>.md` staged (added, copied, modified or renamed)."""
    errors = ""
    names = "\n".join(_grep(_staged_names(hook, "ACMR"), re.compile(pattern)))
    for file in _words(names, hook.cwd):
        errors += f"\\n  {file}: invalid skill path (skills must be folders). Use skills/<name>/SKILL.md"
    return errors


# --- the legacy checks, in bash (0.25.3 to 0.31.12) ----------------------------------------------------


def _closing_line(text: str) -> int | None:
    """`echo "$text" | tail -n +2 | grep -n '^---$' | head -1 | cut -d: -f1`: the closing fence's line number,
    counted from the line after the first."""
    for number, line in enumerate(_lines(text)[1:], start=1):
        if line == "---":
            return number
    return None


def _frontmatter_lines(text: str, closing: int) -> list[str]:
    """`echo "$text" | tail -n +2 | head -n $((closing - 1))`."""
    return _lines(text)[1:closing]


def _trim_spaces(text: str) -> str:
    """`sed 's/^ *//;s/ *$//'`: spaces only (tabs and CRs stay)."""
    return text.strip(" ")


def _cut_value(line: str) -> str:
    """`echo "$line" | cut -d: -f2- | sed ...`: after the first colon, or the whole line without one."""
    return _trim_spaces(line.split(":", 1)[1] if ":" in line else line)


def _fm_value(text: str, key: str) -> str:
    """The hook's `get_fm_value`: every frontmatter line starting `key:` (the first line is not checked), values
    joined by newlines, trailing empty ones dropped by `$(...)`."""
    closing = _closing_line(text)
    if closing is None:
        return ""
    found = [_cut_value(line) for line in _frontmatter_lines(text, closing) if line.startswith(f"{key}:")]
    return "".join(value + "\n" for value in found).rstrip("\n")


def _first_line(text: str) -> str:
    lines = _lines(text)
    return lines[0] if lines else ""


def _legacy_bash_file(hook: _Hook, file: str) -> str:
    """The checks of one staged legacy file, as the bash loop makes them; the errors it adds."""
    staged = hook.show(f":{file}")
    if _first_line(staged) != "---":
        return f"\\n  {file}: missing frontmatter (must start with ---)"
    closing = _closing_line(staged)
    if closing is None:
        return f"\\n  {file}: frontmatter opened but never closed (missing closing ---)"
    head = hook.show(f"HEAD:{file}", quiet=True)
    if head and _fm_value(head, "read_only") == "true":
        return f"\\n  {file}: file is read_only and cannot be modified"
    errors = ""
    has_description = False
    for line in _frontmatter_lines(staged, closing):
        if not line or line[0] in " \t":
            continue
        key, value = _cut_key(line).replace(" ", ""), _cut_value(_echoed(line))
        if key not in LEGACY_KEYS:
            errors += f"\\n  {file}: unknown frontmatter key '{key}' (allowed: {' '.join(LEGACY_KEYS)})"
            continue
        if key == "read_only" and head:
            if value != _fm_value(head, key):
                errors += f"\\n  {file}: '{key}' is a protected field and cannot be changed by the agent"
        elif key == "read_only":
            errors += f"\\n  {file}: '{key}' is a protected field and cannot be set by the agent"
        if key == "description":
            has_description = True
            if not value:
                errors += f"\\n  {file}: 'description' must not be empty"
    if not has_description:
        errors += f"\\n  {file}: missing required field 'description'"
    if head and _fm_value(head, "read_only") and not _fm_value(staged, "read_only"):
        errors += f"\\n  {file}: 'read_only' is a protected field and cannot be removed by the agent"
    return errors


def _echoed(line: str) -> str:
    """`echo "$line"` as one line (an option-only line prints nothing)."""
    return _echo_out(line).rstrip("\n")


def _cut_key(line: str) -> str:
    """`echo "$line" | cut -d: -f1`."""
    return _echoed(line).split(":", 1)[0]


def _legacy_hook(hook: _Hook, node: bool) -> int:
    """The legacy-only half of the hook (all of it before 0.31.12); `node`: 0.32.8+, where node checks each file.
    Returns the status it ends with before the constraints; raises _HookExit on `exit`."""
    errors = _flat_skills(hook, r"^(memory/)?skills/[^/]+\.md$")
    names = "\n".join(_grep(_staged_names(hook, "ACM"), SYSTEM_OR_REFERENCE))
    files = _words(names, hook.cwd)
    if node:
        errors += _node_files(hook, files, "legacy", "")
    else:
        for file in files:
            errors += _legacy_bash_file(hook, file)
    if errors:
        hook.echo("Frontmatter validation failed:")
        hook.printed.append(_echo_e(errors))
        raise _HookExit(1)
    return 0


# --- the layout policy and the v2 checks (0.31.12+) ----------------------------------------------------


def _policy(hook: _Hook) -> str:
    """`$(cat "$(git rev-parse --git-common-dir)/letta-memory-layout-policy" 2>/dev/null || true)`."""
    if hook.policy is not None:
        return hook.policy.rstrip("\n")
    common = _substitution(hook.git("rev-parse", "--git-common-dir", quiet=True)[1])
    path = hook.cwd / common / POLICY_FILE
    try:
        return _substitution(path.read_bytes())
    except OSError:
        return ""


def _policy_hook(hook: _Hook, profile: Profile) -> int:
    """The hook from 0.31.12 on: the policy file picks the v2 or the legacy checks, then the constraints."""
    policy = _policy(hook)
    node = profile.commit_hook != "policy-bash"
    root = hook.exists(":MEMORY.md") or (node and hook.exists("HEAD:MEMORY.md"))
    if policy == "shared-memory" or (policy == "root-marker" and root):
        errors = _flat_skills(hook, r"^skills/[^/]+\.md$")
        if profile.commit_hook == "node-tree":
            errors += _node_files(hook, [], "memfs-v2", policy, tree=True)
        else:
            files = [file for file in _ls_md_quoted(hook) if _projected(hook, file, policy)]
            if node:
                errors += _node_files(hook, files, "memfs-v2", policy)
            else:
                errors += "".join(_v2_bash_file(hook, file) for file in files)
        if errors:
            hook.echo("Memory validation failed:")
            hook.printed.append(_echo_e(errors))
            raise _HookExit(1)
    else:
        _legacy_hook(hook, node)
    return _constraints(hook, policy, node)


def _ls_md_quoted(hook: _Hook) -> list[str]:
    """`git ls-files '*.md'` read line by line (names git quotes stay quoted); skills/ left out."""
    out = hook.git("ls-files", "*.md")[1].decode("utf-8", "surrogateescape")
    return [line for line in out.split("\n")[:-1] if not line.startswith("skills/")]


def _projected(hook: _Hook, file: str, policy: str) -> bool:
    """Under `root-marker`, a file counts only when every directory above it has its MEMORY.md in the index."""
    if policy != "root-marker":
        return True
    parts = file.split("/")[:-1]
    return all(hook.exists(f":{'/'.join(parts[:end])}/MEMORY.md") for end in range(len(parts), 0, -1))


def _v2_bash_file(hook: _Hook, file: str) -> str:
    """0.31.12's `validate_v2_file`: the errors one projected v2 file adds."""
    staged = hook.show(f":{file}")
    if file.rsplit("/", 1)[-1] == "MEMORY.md":
        return f"\\n  {file}: MEMORY.md must not have frontmatter" if _first_line(staged) == "---" else ""
    if _first_line(staged) != "---":
        return f"\\n  {file}: missing frontmatter (must start with ---)"
    closing = _closing_line(staged)
    if closing is None:
        return f"\\n  {file}: frontmatter opened but never closed (missing closing ---)"
    errors = ""
    seen: set[str] = set()
    for line in _frontmatter_lines(staged, closing):
        if not line:
            continue
        key, value = _trim_spaces(_cut_key(line)), _cut_value(_echoed(line))
        if key not in V2_KEYS:
            errors += f"\\n  {file}: unknown frontmatter key '{key}' (allowed: name description)"
            continue
        if key in seen:
            errors += f"\\n  {file}: duplicate frontmatter key '{key}'"
        seen.add(key)
        if value in ("", '""', "''"):
            errors += f"\\n  {file}: '{key}' must not be empty"
    for key in V2_KEYS:
        if key not in seen:
            errors += f"\\n  {file}: missing required field '{key}'"
    return errors


# --- node: validateMemoryFileFrontmatter (src/memory-frontmatter.ts, 0.32.8+) ------------------------------


def _node_files(hook: _Hook, files: list[str], fmt: str, policy: str, tree: bool = False) -> str:
    """`validate_memory_files FORMAT`: node checks each file (0.34.1+ for v2: every `.md` git lists, projected
    there) and prints `  <error>` lines; the hook adds them to its errors. A file node cannot read ends the hook."""
    if tree:
        listed = hook.git("ls-files", "-z", "*.md", quiet=True)[1].decode("utf-8", "replace")
        files = [path for path in listed.split("\0") if path]
    elif not files:
        return ""
    printed: list[str] = []
    for path in files:
        if tree and (path.startswith("skills/") or not _projected(hook, path, policy)):
            continue
        status, content = hook.git("show", f":{path}", quiet=True)
        if status != 0:
            hook.printed.append(COULD_NOT_READ + "\n")
            raise _HookExit(1)
        previous = None
        if fmt == "legacy":
            status, before = hook.git("show", f"HEAD:{path}", quiet=True)
            previous = before.decode("utf-8", "replace") if status == 0 else None
        for error in frontmatter_errors(path, content.decode("utf-8", "replace"), previous, fmt):
            printed.append("  " + error + "\n")
    result = "".join(printed).rstrip("\n")
    return "\\n" + result if result else ""


def _legacy_value(text: str | None, key: str) -> str:
    """validateMemoryFileFrontmatter's `legacyValue`: the frontmatter lines starting `key:` (the first line is not
    checked), values space-trimmed, joined by newlines."""
    lines = text.split("\n") if text is not None else []
    if "---" not in lines[1:]:
        return ""
    end = lines.index("---", 1)
    return "\n".join(_trim_spaces(line[len(key) + 1 :]) for line in lines[1:end] if line.startswith(f"{key}:"))


def frontmatter_errors(path: str, content: str, previous: str | None, fmt: str) -> list[str]:
    """`validateMemoryFileFrontmatter({path, content, previousContent, format})`: its error messages, in order."""
    v2 = fmt == "memfs-v2"
    lines = content.split("\n")
    if v2 and path.split("/")[-1] == "MEMORY.md":
        return [f"{path}: MEMORY.md must not have frontmatter"] if lines[0] == "---" else []
    if lines[0] != "---":
        return [f"{path}: missing frontmatter (must start with ---)"]
    if "---" not in lines[1:]:
        return [f"{path}: frontmatter opened but never closed (missing closing ---)"]
    closing = lines.index("---", 1)
    if not v2 and previous and _legacy_value(previous, "read_only") == "true":
        return [f"{path}: file is read_only and cannot be modified"]
    errors: list[str] = []
    seen: set[str] = set()
    allowed = V2_KEYS if v2 else LEGACY_KEYS
    for line in lines[1:closing]:
        if not line or (not v2 and line[0] in " \t"):
            continue
        raw_key, _, rest = line.partition(":")
        key = _trim_spaces(raw_key) if v2 else raw_key.replace(" ", "")
        value = _trim_spaces(rest if ":" in line else line)
        if key not in allowed:
            errors.append(f"{path}: unknown frontmatter key '{key}' (allowed: {' '.join(allowed)})")
            continue
        if v2 and key in seen:
            errors.append(f"{path}: duplicate frontmatter key '{key}'")
        seen.add(key)
        if key == "read_only" and not previous:
            errors.append(f"{path}: 'read_only' is a protected field and cannot be set by the agent")
        elif key == "read_only" and value != _legacy_value(previous, key):
            errors.append(f"{path}: 'read_only' is a protected field and cannot be changed by the agent")
        if (v2 or key == "description") and (not value or (v2 and value in ('""', "''"))):
            errors.append(f"{path}: '{key}' must not be empty")
    errors.extend(
        f"{path}: missing required field '{key}'" for key in (V2_KEYS if v2 else ("description",)) if key not in seen
    )
    if not v2 and _legacy_value(previous, "read_only") and not _legacy_value(content, "read_only"):
        errors.append(f"{path}: 'read_only' is a protected field and cannot be removed by the agent")
    return errors


# --- node: the tree constraints (src/agent/memory-constraints.ts's validator, 0.32.8+ on a v2 root) ---------

_REPORT_HEAD = (
    "Memory validation blocked this commit.",
    "No files were committed. Your staged changes are still present.",
    "Validation checks the complete repository, so these problems may predate your staged changes.",
    "",
    "Fix these problems:",
)
_REPORT_TAIL = (
    "Split files above their per-file limit, then retry the commit.",
    "Limits come from .memfs.config.json, or the Letta Code defaults when it is absent.",
    "Do not raise or disable these limits unless the user explicitly approves it.",
)


def _constraints(hook: _Hook, policy: str, node: bool) -> int:
    """`validate_memory_constraints`: with no `.memfs.config.json` (the only case ported) the validator runs on a
    v2 root only (root-marker, MEMORY.md in the index or HEAD), with upstream's default limits; its status."""
    if not node or policy != "root-marker":
        return 0
    head_root = hook.exists("HEAD:MEMORY.md")
    if not (hook.exists(":MEMORY.md") or head_root):
        return 0
    errors = _tree_errors(hook, require_root=head_root)
    if not errors:
        return 0
    lines = [*_REPORT_HEAD, *("  " + error for error in errors), ""]
    lines += ["Move non-core detail out of root Markdown and behind MEMORY.md indexes.", *_REPORT_TAIL]
    hook.printed.append("".join(line + "\n" for line in lines))
    return 1


def _tree_errors(hook: _Hook, require_root: bool) -> list[str]:
    """`validateMemoryTreeConstraints` under root-marker with the default config, over the index."""
    entries = [
        e for e in hook.git("ls-files", "--stage", "-z", quiet=True)[1].decode("utf-8", "replace").split("\0") if e
    ]
    files = [(e.split("\t", 1)[1], e.split(" ", 1)[0]) for e in entries if e.split("\t", 1)[1].endswith(".md")]
    paths = {path for path, _ in files}
    errors: list[str] = []
    if (require_root or "MEMORY.md" in paths) and "MEMORY.md" not in paths:
        errors.append("MEMORY.md: root memory index is required for MemFS v2")
    memory = [(path, mode) for path, mode in files if not path.startswith("skills/")]
    for path, _ in memory:
        parts = path.split("/")[:-1]
        missing = next(
            (
                f"{'/'.join(parts[:end])}/MEMORY.md"
                for end in range(1, len(parts) + 1)
                if f"{'/'.join(parts[:end])}/MEMORY.md" not in paths
            ),
            None,
        )
        if missing is not None:
            errors.append(f"{path}: missing required index {missing}")
    core = 0
    for path, mode in memory:
        if not mode.startswith("100"):
            errors.append(f"{path}: memory Markdown must be a regular file")
            continue
        depth = path.count("/")
        if depth > DEFAULT_MAX_DEPTH:
            errors.append(f"{path}: depth {depth} exceeds maxDepth {DEFAULT_MAX_DEPTH}")
        characters = len(hook.git("show", f":{path}", quiet=True)[1].decode("utf-8", "replace"))
        if "/" not in path:
            core += characters
        if characters > DEFAULT_MAX_FILE_CHARACTERS:
            errors.append(
                f"{path}: {characters} characters exceeds {DEFAULT_MAX_FILE_CHARACTERS} from maxFileCharacters"
            )
    if core > DEFAULT_MAX_CORE_CHARACTERS:
        errors.append(
            f"core memory: {core} characters exceeds {DEFAULT_MAX_CORE_CHARACTERS} from maxCoreMemoryCharacters"
        )
    return errors
