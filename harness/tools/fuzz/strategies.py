"""Hypothesis strategies for `conformance fuzz`: repositories and compile inputs from the corpus's hazards.

Names come from risky alphabets (quotes, spaces, non-ASCII, control characters, leading and trailing
whitespace, bytes that are not UTF-8) and from three families the port models on purpose (issue 17):
- `git show HEAD:<path>` revision syntax (memfs_prompt.git_head): `..`, `...`, `^`, `^{}`, `^-`, `~`, `@{`,
  `:`, `:/`, a leading `./` (a ` .` directory trimmed), globs `*?[`, first components near NAME_MAX, and
  `HEAD:<path>` files in the work tree;
- JavaScript built-ins reached when `system/**` is walked through a plain object (memfs_prompt.jsobjects):
  `constructor`, `__proto__`, `valueOf`, `length`, `name`, `caller`, ... nested (`system/constructor/name.md`);
- and, as compile inputs, JavaScript values (memfs_prompt.jsvalues): `previous_message_count` any JSON
  number (floats, negatives, -0.0, 1e21, 2^53+1, tiny exponents, past the largest double) and `now` any ISO
  string `new Date` reads alike everywhere (harness.cases.inputs.clock_error: roll-overs, hour 24, six-digit
  and signed years, many fraction digits, Invalid Dates).
Contents take every frontmatter form and encoding (BOM, CRLF, CR, invalid UTF-8, NUL), symlinks and
executables; repositories have up to three commits, a third of the trees are memfs-v2, and some inputs give
`client_skills` (harness.tools.fuzz.shapes).

What users can write (issue 25): one name in six, some descriptions and bodies, skill names and descriptions,
system prompts and ids are text from Unicode's whole assigned repertoire up to the reference runtime's Unicode
version (harness.tools.fuzz.repertoire: recent blocks, Han, combining sequences, noncharacters), and input
strings may hold lone surrogates and astral characters written as two UTF-16 code units (made JavaScript
strings by harness.cases.inputs.js_value, as the loader makes a case's). Half the repositories set
`core.quotePath=false`, so git prints those names raw and upstream sorts them. Inputs may hold odd numbers
anywhere (-0.0, 1e21, 2^53+1, 10^400, 5e-324) and, in one example in twenty, a NaN or an infinity, or a clock
only Date's fallback parser reads: such inputs are `refused` (harness.tools.fuzz.campaign.refusal checks that the loader
refuses them at their line and that no request line can carry them), never compiled.

Every strategy is built once, at import: Hypothesis validates a strategy object the first time it draws
from it, so strategies made inside a draw cost that again and again (this is most of what generation cost).
Text is drawn with string alphabets (one choice per string, not one per character).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from harness.cases.inputs import clock_error, js_value
from harness.core.repomodel import MODE_EXEC, MODE_FILE, MODE_LINK, Blob, CommitModel, RepoModel, WorktreeNoise
from harness.core.repospec import valid_tree
from harness.tools.fuzz.layouts import gitlinked, repo_shapes
from harness.tools.fuzz.repertoire import js_text, unicode_text
from harness.tools.fuzz.shapes import NON_FINITE, client_skills_values, v2_trees

RISKY_CHARS = (
    "aZb_-. 019"  # plain, with the collation hazards (`_`, case, digits)
    "\"'\\<>&$`{}"  # quoting, XML and replacement-pattern characters
    "éßÄ日🦀"  # non-ASCII (git quotes these names)
    "\t\n\x01\x1c\x7f"  # control characters
    "\u00a0\u0085\u2028\ufeff\u3000"  # whitespace JS and Python trim differently
)
WORD_NAMES = ("persona", "human", "Zeta", "alpha", "_under", "1", "01", "10", "MEMORY", "SKILL", "a", "A", "é")
RAW_NAMES = (b"\xff", b"caf\xe9", b"\xc3", b"a\xffb", b"\xed\xa0\x80x")  # not UTF-8 (the last: a surrogate)
# ` .` and ` ..` first: upstream trims the listed path, so `HEAD:./x.md` and `HEAD:../x.md` are asked (revision)
ROOTS = ("system",) * 6 + ("",) * 3 + ("notes", "skills", "system/persona", " .", " ..")
EXTENSIONS = (".md", ".md", ".md", ".md", ".MD", ".md ", " .md", ".txt", "")
WHITESPACE = ("", " ", "\t", "\u00a0", "\ufeff", "\u0085", "\x1c", "\u2028", "\n", "\r")
# git show HEAD:<path> revision syntax (memfs_prompt.git_head.revision_syntax_needs_git_show and the cases tagged
# `revision`): ranges, `^-`, peeling and navigation suffixes, reflog and search syntax, globs (pathspecs)
REVISION_NAMES = (
    "a..b",
    "a..HEAD:b",
    "x...",
    "...",
    "a...b",
    "r^-1",
    "^-",
    "a^",
    "a^{}",
    "a^{tree}",
    "a~1",
    "~",
    "a@{0}",
    "@{-1}",
    "@",
    "a:b",
    ":/x",
    ":",
    "HEAD:a",
    "HEAD",
    "a*",
    "q?",
    "[1]",
    "a[1]",
    "*",
    "[",
    "a b^!",
    " .",
    " ..",
)
# members of Object.prototype, Function, Function.prototype and Number a `system/**` walk reaches (jsobjects);
# under system/, an Object.prototype member (POLLUTING) as a directory or a file name makes upstream write onto a
# shared built-in: the reference process then restarts (a second of CPU), so those names come only in "builtins"
# repositories (one in 50); elsewhere a look-alike (`xconstructor`, `hasOwnPropertyx`) takes their place
POLLUTING = (
    "constructor",
    "__proto__",
    "valueOf",
    "toString",
    "hasOwnProperty",
    "isPrototypeOf",
    "toLocaleString",
    "propertyIsEnumerable",
    "__defineGetter__",
    "__lookupGetter__",
)
BUILTIN_NAMES = (
    *POLLUTING,
    "prototype",
    "length",
    "name",
    "caller",
    "arguments",
    "apply",
    "bind",
    "call",
    "NaN",
    "MAX_VALUE",
    "EPSILON",
    "isInteger",
    "toFixed",
    "__value__",
)
LONG_LENGTHS = (249, 250, 251, 252, 255)  # `HEAD:` + a first component past 250 bytes is over NAME_MAX


def _component_ok(part: bytes) -> bool:
    return part not in (b"", b".", b"..") and part.lower() != b".git" and b"/" not in part and b"\0" not in part


_words = st.sampled_from(WORD_NAMES)
_whitespace = st.sampled_from(WHITESPACE)
_risky_text = st.text(alphabet=RISKY_CHARS.replace("/", ""), min_size=1, max_size=6)
_plain_text = st.text(alphabet="aAbBzZ_-. 019", min_size=1, max_size=6)
_padded = st.builds(lambda a, s, b: a + s + b, _whitespace, _words, _whitespace)
_revision = st.builds(
    lambda a, s, b: a + s + b,
    st.sampled_from(("", "", "x", "HEAD:")),
    st.sampled_from(REVISION_NAMES),
    st.sampled_from(("", "", "y", "..")),
)
_builtin = st.sampled_from(BUILTIN_NAMES)
_long = st.builds(lambda n, c: c * n, st.sampled_from(LONG_LENGTHS), st.sampled_from("nmé"))
_raw = st.sampled_from(RAW_NAMES)

# Mostly names git prints unquoted (they reach the renderer), with risky ones often enough to matter.
# (Rare choices are tested against a middle value: Hypothesis draws the smallest value, 0, far more often.)
_name_kind = st.integers(0, 35)
_unicode = unicode_text()
_POLLUTING_BYTES = frozenset(name.encode() for name in POLLUTING)


def _component(draw: st.DrawFn, directory: bool) -> bytes:
    kind = draw(_name_kind)
    if kind < 7:
        part = draw(_words)
    elif kind < 13:
        part = draw(_plain_text)
    elif kind < 16:
        part = draw(_padded)
    elif kind < 20:
        part = draw(_risky_text)
    elif kind < 21:
        return draw(_raw)
    elif kind < 26:
        part = draw(_revision)
    elif kind < 28:
        part = draw(_builtin)
    elif kind < 30:
        encoded: bytes = draw(_long).encode("utf-8")[:255]
        return encoded.decode("utf-8", "ignore").encode("utf-8")
    else:  # the assigned repertoire (git prints it raw under core.quotePath=false)
        part = draw(_unicode).replace("/", "x").replace("\0", "x")
    encoded = part.encode("utf-8")
    if encoded in _POLLUTING_BYTES:
        return b"x" + encoded if directory else encoded + b"x"  # outside builtin repositories: a look-alike
    return encoded if _component_ok(encoded) else b"x"


@st.composite
def name_components(draw: st.DrawFn) -> bytes:
    """One file name (never empty, `.`, `..`, `.git`, or holding `/` or NUL, never a POLLUTING built-in)."""
    return _component(draw, directory=False)


@st.composite
def dir_components(draw: st.DrawFn) -> bytes:
    """One directory name (as name_components)."""
    return _component(draw, directory=True)


_roots = st.sampled_from(ROOTS)
_extensions = st.sampled_from(EXTENSIONS)
_dirs = st.lists(dir_components(), max_size=2)


@st.composite
def paths(draw: st.DrawFn) -> bytes:
    """A file path: a root, up to two directories and a leaf."""
    root = draw(_roots).encode()
    leaf = draw(name_components()) + draw(_extensions).encode()
    return b"/".join([p for p in root.split(b"/") if p] + draw(_dirs) + [leaf])


_builtin_chain = st.lists(_builtin, min_size=1, max_size=4)
_builtin_leaf = st.one_of(_builtin, _words)


@st.composite
def builtin_paths(draw: st.DrawFn) -> bytes:
    """`system/` and a chain of built-in names (`system/constructor/prototype/name.md`)."""
    chain = [p.encode() for p in draw(_builtin_chain)] + [draw(_builtin_leaf).encode()]
    return b"/".join([b"system", *chain]) + draw(_extensions).encode()


_text_alphabet = RISKY_CHARS + "abc xyz:-|>#\n\n\n"
short_text = st.text(alphabet=_text_alphabet, max_size=24)
_short_or_unicode = st.one_of(short_text, short_text, short_text, _unicode)
FRAGMENTS = ("$&", "$$", "$`", "$'", "{CORE_MEMORY}", "</memory>", "<persona>", "---", "description: x", "  ", "\n\n")
_fragments = st.sampled_from(FRAGMENTS)
_fragments_or_none = st.sampled_from(("",) * 8 + FRAGMENTS)

descriptions = st.one_of(
    st.text(alphabet=RISKY_CHARS.replace("\n", "") + "abc :#|>", max_size=16),
    _unicode.map(lambda text: text.replace("\n", " ")),
    st.sampled_from(("", "|", ">", "|-", "'quoted'", '"dq"', "[a, b]", "null", "1", "x: y", "#c")),
)
_form = st.integers(0, 8)
_keys = st.sampled_from(("name", "__proto__", "constructor", "limit", "description"))


@st.composite
def frontmatters(draw: st.DrawFn) -> str:
    """Every frontmatter form: none, one line, block scalars, empty, unclosed, lists, fence variants, keys."""
    form = draw(_form)
    if form == 0:
        return ""
    if form == 4:
        return "---\n---\n"
    description = draw(descriptions)
    if form == 1:
        return f"---\ndescription: {description}\n---\n"
    if form == 2:
        return f"---\ndescription: |\n  {description}\n  second line\n---\n"
    if form == 3:
        return f"---\ndescription: >-\n  {description}\n\n  folded\n---\n"
    if form == 5:
        return f"---\ndescription: {description}\n"  # never closed
    if form == 6:
        return f"---\nname: n\n  indented: {description}\ndescription:\n  - {description}\n---\n"
    if form == 7:
        return f"--- \ndescription: {description}\n---"  # fence variants, no newline after the close
    return f"---\n{draw(_keys)}: {description}\ndescription: {description}\n---\n"


@st.composite
def bodies(draw: st.DrawFn) -> str:
    """Text with a risky fragment in it (or not), between whitespace JS and Python trim differently."""
    middle: str = draw(short_text) + draw(_fragments_or_none) + draw(_short_or_unicode)
    return draw(_whitespace) + middle + draw(_whitespace)


_blob_kind = st.integers(0, 19)
_link_targets = st.sampled_from((b"../x", b"system/a.md", b"persona.md", b"\xff", b"nowhere"))
_encodings = st.sampled_from(("utf-8",) * 6 + ("bom", "crlf", "bom-crlf", "cr", "invalid", "nul"))
_fraction = st.floats(0, 1)


@st.composite
def blobs(draw: st.DrawFn) -> Blob:
    """A file's mode and bytes: mostly Markdown with frontmatter, in every encoding; sometimes a symlink."""
    kind = draw(_blob_kind)
    if kind == 10:
        return Blob(MODE_LINK, draw(_link_targets))
    data = (draw(frontmatters()) + draw(bodies())).encode("utf-8")
    encoding = draw(_encodings)
    if "crlf" in encoding:
        data = data.replace(b"\n", b"\r\n")
    if encoding == "cr":
        data = data.replace(b"\n", b"\r")
    if encoding.startswith("bom"):
        data = b"\xef\xbb\xbf" + data
    if encoding in ("invalid", "nul"):
        at = int(draw(_fraction) * len(data))
        data = data[:at] + (b"\xff\xc3" if encoding == "invalid" else b"\0") + data[at:]
    return Blob(MODE_EXEC if kind == 11 else MODE_FILE, data)


def _tree_of(entries: dict[bytes, Blob]) -> dict[bytes, Blob]:
    """Drop entries until git can hold the tree (no name that is both a file and a directory)."""
    tree: dict[bytes, Blob] = {}
    for name in sorted(entries, key=len):
        candidate = {**tree, name: entries[name]}
        if valid_tree(candidate):
            tree = candidate
    return tree


v1_trees = st.dictionaries(paths(), blobs(), min_size=1, max_size=6).map(_tree_of)
_small_v1_trees = st.dictionaries(paths(), blobs(), min_size=1, max_size=3).map(_tree_of)
# One tree in three is memfs-v2 (a root MEMORY.md); a repository's commits mix both, so it may switch.
_v2_trees = v2_trees(blobs(), dir_components()).map(_tree_of)
trees = st.one_of(v1_trees, v1_trees, _v2_trees)
_later_trees = st.one_of(_small_v1_trees, _small_v1_trees, _v2_trees)  # what a later commit changes or adds
_builtin_files = st.dictionaries(builtin_paths(), blobs(), min_size=1, max_size=3)
_repo_kind = st.integers(0, 49)
_later_commits = st.integers(0, 2)
_keep = st.lists(st.booleans(), max_size=8)
_noise_kind = st.integers(0, 13)
_booleans = st.booleans()


def _fits_a_work_tree(name: bytes) -> bool:
    return all(len(part) <= 250 for part in name.split(b"/"))  # `HEAD:` + the name must fit NAME_MAX too


@st.composite
def worktree_noise(draw: st.DrawFn, head: dict[bytes, Blob]) -> WorktreeNoise:
    """Mostly none; sometimes an untracked (or staged) `HEAD:<path>` file for a committed path (revision)."""
    if draw(_noise_kind) != 7 or not head or not all(_fits_a_work_tree(n) for n in head):
        return WorktreeNoise()
    name = draw(st.sampled_from(sorted(head)))
    noise = {b"HEAD:" + name: Blob(MODE_FILE, b"untracked\n")}
    return WorktreeNoise(noise, (), draw(_booleans)) if valid_tree({**head, **noise}) else WorktreeNoise()


@st.composite
def repo_models(draw: st.DrawFn) -> RepoModel:
    """One to three commits (later ones keep some files, change or add others), sometimes work-tree noise,
    else sometimes another repository shape and gitlinks (harness.tools.fuzz.layouts)."""
    first = draw(trees)
    if draw(_repo_kind) == 25:  # one repository in 50: built-ins reached through the plain-object walk
        first = _tree_of({**first, **draw(_builtin_files)})
    commits = [CommitModel(first)]
    for _ in range(draw(_later_commits)):
        previous = commits[-1].files
        keep = draw(_keep)
        kept = {n: b for i, (n, b) in enumerate(sorted(previous.items())) if i < len(keep) and keep[i]}
        commits.append(CommitModel(_tree_of({**kept, **draw(_later_trees)})))
    model = RepoModel(commits, worktree=draw(worktree_noise(commits[-1].files)))
    if model.worktree:  # noise needs a checked-out work tree: the plain shape (a missing gitlink cannot be checked out)
        return model
    model.shape = draw(_shapes)  # bare, .git-dir, SHA-256, tag or tree HEADs, own config (fuzz_layouts)
    if draw(_booleans) and all(key != "core.quotePath" for key, _ in model.shape.config):
        model.shape = replace(model.shape, config=(*model.shape.config, ("core.quotePath", "false")))
    return draw(gitlinked(model))


_shapes = repo_shapes()


# --- compile inputs -------------------------------------------------------------------------------

SYSTEM_PROMPTS = ("S $& $$ {CORE_MEMORY}", "no placeholder \u00a0\n", "{CORE_MEMORY}{CORE_MEMORY}")
MESSAGE_COUNTS: tuple[int | float, ...] = (
    0,
    1,
    3,
    -1,
    -5,
    3.0,
    2.5,
    -0.0,
    0.1 + 0.2,
    1e21,
    1e20,
    10**21,
    2**53,
    2**53 + 1,
    2**63,
    1e-6,
    1.5e-7,
    5e-324,
    1.7976931348623157e308,
    10**400,
    -(10**400),
    123456789012345678901234567890,
)
message_counts: st.SearchStrategy[int | float] = st.one_of(
    st.sampled_from(MESSAGE_COUNTS),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False),
)
_refused_counts = st.sampled_from(NON_FINITE)
_years = st.sampled_from(
    (
        "2026",
        "2026",
        "0000",
        "0001",
        "1969",
        "1970",
        "2000",
        "9999",
        "+275760",
        "-271821",
        "+002026",
        "-000001",
        "+010000",
        "-000000",
        "+275761",
    )
)
_two = ("00", "01", "02", "09", "10", "12", "13", "23", "24", "28", "29", "30", "31", "32", "59", "60")
_fields = st.sampled_from(_two)
_months = st.sampled_from(("01", "02", "06", "12", "00", "13", "02"))
_fractions = st.sampled_from(("", ".5", ".123", ".1234", ".999999", ".123456789", ".0000000001", ".9999999999999"))
_zones = st.sampled_from(("Z", "Z", "z", "", "+00:00", "-01:00", "+05:30", "+0530", "+24:00", "-23:59", "+23:60"))
_date_form = st.integers(0, 5)
_time_marks = st.sampled_from("TTt")
DEFAULT_NOW = "2026-01-02T03:04:05.678Z"


@st.composite
def js_dates(draw: st.DrawFn) -> str:
    """A `now` string in the ISO forms `new Date` reads without its legacy parser, valid or not."""
    form = draw(_date_form)
    text = draw(_years)
    if form >= 1:
        text += "-" + draw(_months)
    if form >= 2:
        text += "-" + draw(_fields)
    if form >= 3:
        text += draw(_time_marks) + draw(_fields) + ":" + draw(_fields)
        if form >= 4:
            text += ":" + draw(_fields) + draw(_fractions)
        text += draw(_zones)
    if clock_error(text):  # only Date's fallback parser reads it: no request may carry it
        return DEFAULT_NOW
    return text


# what only Date's implementation-specific fallback parser reads: the loader refuses these (clock_error)
FALLBACK_CLOCKS = ("Jan 2 2026", "2026/01/02", "2026-13", "", "now", "2026-01-02 03:04:05Z", "1767322800000")
_fallback_clocks = st.sampled_from(FALLBACK_CLOCKS)


_js_text = js_text()
_systems = st.one_of(st.sampled_from(SYSTEM_PROMPTS), st.builds(lambda text: text + " {CORE_MEMORY}", _js_text))
_agent_ids = st.one_of(st.sampled_from(("a$&b", "agent-<x>")), _js_text)
_refused_kind = st.integers(0, 2)


@st.composite
def refused_inputs(draw: st.DrawFn) -> dict[str, Any]:
    """Inputs no request can carry: a NaN or an infinity somewhere, or a clock only Date's fallback parser reads."""
    kind = draw(_refused_kind)
    if kind == 0:
        return {"previous_message_count": draw(_refused_counts)}
    if kind == 1:
        return {"now": draw(_fallback_clocks)}
    field = draw(st.sampled_from(("name", "description", "location")))
    return {"client_skills": [{"name": "build", "description": "d", field: draw(_refused_counts)}]}


_inputs: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.just({}),
    st.just({}),
    st.just({}),
    st.fixed_dictionaries({"system": _systems}),
    st.fixed_dictionaries({"agent_id": _agent_ids, "previous_message_count": message_counts}),
    st.fixed_dictionaries({"previous_message_count": message_counts}),
    st.fixed_dictionaries({"now": js_dates()}),
    st.fixed_dictionaries({"now": js_dates(), "previous_message_count": message_counts}),
    st.fixed_dictionaries({"client_skills": client_skills_values}),
    st.fixed_dictionaries({"client_skills": client_skills_values}),
    st.fixed_dictionaries({"client_skills": client_skills_values, "system": _systems}),
)
_one_in_twenty = st.integers(0, 19)


@st.composite
def _compile_inputs(draw: st.DrawFn) -> dict[str, Any]:
    if draw(_one_in_twenty) == 10:
        return draw(refused_inputs())
    inputs: dict[str, Any] = js_value(draw(_inputs))  # the JavaScript strings the loader would make of them
    return inputs


compile_inputs: st.SearchStrategy[dict[str, Any]] = _compile_inputs()
