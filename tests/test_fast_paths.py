"""The port's fast paths (issue 9) give what the slow, obviously-right ways give.

- (collation keys of ASCII strings equal ICU's: tests/test_collation.py);
- `git_quotes_path` is git's rule (control bytes, DEL, `"`, `\\`, non-ASCII) on every byte;
- GetSubstitution's `$` patterns follow the ECMAScript steps, transcribed below;
- blobs are fetched by the listed oid only where that is what `HEAD:<path>` names;
- compiles from one reading of HEAD (`one_reading_of_head`, a matrix's profiles) give what separate ones give;
- `git_unquote` (one regular expression) undoes C quoting as the byte-by-byte reading of git's
  quote.c rules, transcribed below, does, on any text between the quotes.
"""

from __future__ import annotations

import json
import subprocess

from hypothesis import given
from hypothesis import strategies as st

from memfs_prompt.git_head import git_unquote, open_committed_head
from memfs_prompt.quirks import git_quotes_path, js_replace_all


def test_every_single_byte_name_is_quoted_exactly_when_git_quotes_it() -> None:
    for byte in range(256):
        quoted = byte < 0x20 or byte == 0x7F or byte in (0x22, 0x5C) or byte >= 0x80
        assert git_quotes_path(bytes([byte])) is quoted, byte


def ecmascript_get_substitution(matched: str, string: str, position: int, replacement: str) -> str:
    """ES2024 22.1.3.19.1 GetSubstitution with no captures and no named groups, step by step."""
    result = ""
    template = replacement
    while template:
        if template.startswith("$$"):
            ref, replacement_text = "$$", "$"
        elif template.startswith("$`"):
            ref, replacement_text = "$`", string[:position]
        elif template.startswith("$&"):
            ref, replacement_text = "$&", matched
        elif template.startswith("$'"):
            ref, replacement_text = "$'", string[min(position + len(matched), len(string)) :]
        else:
            ref = template[0]
            replacement_text = ref  # `$<`, `$1` with no captures, a lone `$`, any other character
        result += replacement_text
        template = template[len(ref) :]
    return result


@given(st.text(alphabet="$&`'<1ab{}X", max_size=12), st.text(alphabet="abX{", max_size=8))
def test_replace_all_substitutes_as_the_ecmascript_steps_say(replacement: str, around: str) -> None:
    subject = around + "{X}" + around + "{X}"
    last, out = 0, []
    for position in (len(around), 2 * len(around) + 3):
        out.append(subject[last:position] + ecmascript_get_substitution("{X}", subject, position, replacement))
        last = position + 3
    expected = "".join(out) + subject[last:]
    assert js_replace_all(subject, "{X}", replacement) == expected


def test_blobs_are_asked_for_by_oid_at_the_top_and_by_path_below_it(make_repo, git_env) -> None:
    repo = make_repo({"a.md": "top\n", "mem/a.md": "below\n", " lead.md": "lead\n"})
    top = open_committed_head(repo.path, git_env)
    try:
        oid = repo.git("rev-parse", "HEAD:a.md").strip()
        assert top.object_names(["a.md", "lead.md"]) == [oid, b"HEAD:lead.md"]  # a trimmed name is not listed
        assert top.read_paths(["a.md", "lead.md"]) == [b"top\n", None]
    finally:
        top.close()
    below = open_committed_head(repo.path / "mem", git_env)
    try:
        # listed relative to mem/, but `git show HEAD:a.md` names the top-level a.md, as upstream reads it
        assert [e.path for e in below.entries] == [b"a.md"]
        assert below.object_names(["a.md"]) == [b"HEAD:a.md"]
        assert below.read_paths(["a.md"]) == [b"top\n"]
    finally:
        below.close()


def test_the_listing_is_git_ls_tree_s(make_repo, git_env) -> None:
    names = {"b.md": "b\n", "a/b/c.md": "c\n", "a-b.md": "d\n", "a.b/x.md": "e\n", "z/.hidden.md": "f\n"}
    repo = make_repo(names)
    head = open_committed_head(repo.path, git_env)
    try:
        listed = [e.path for e in head.entries]
    finally:
        head.close()
    expected = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "-z", "HEAD"],
        cwd=repo.path,
        env=git_env,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")[:-1]
    assert listed == expected


def test_a_git_without_batch_command_compiles_the_same(make_repo, git_env, tmp_path, monkeypatch) -> None:
    import shutil

    import memfs_prompt.git_head as git_head
    from memfs_prompt import compile_system_prompt
    from memfs_prompt.cli import parse_now

    repo = make_repo({"system/a.md": "---\ndescription: d\n---\nA\n", "notes/b.md": "B\n"})
    old_git = tmp_path / "old-git"
    old_git.mkdir()
    (old_git / "git").write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do [ "$arg" = --batch-command ] && { echo "error: unknown option" >&2; exit 129; }; done\n'
        f'exec {shutil.which("git")} "$@"\n'
    )
    (old_git / "git").chmod(0o755)
    monkeypatch.setattr(git_head, "_git_lacks_batch_command", False)

    def compiled(env: dict[str, str]) -> dict:
        return compile_system_prompt(
            repo.path,
            system="{CORE_MEMORY}",
            agent_id="a",
            conversation_id="c",
            now=parse_now("2026-01-01T00:00:00Z"),
            git_env=env,
        ).to_json()

    current = compiled(git_env)
    assert git_head._git_lacks_batch_command is False
    older = compiled({**git_env, "PATH": f"{old_git}:{git_env['PATH']}"})
    assert git_head._git_lacks_batch_command is True  # learnt, and plain --batch used from then on
    assert older == current and "<projection>" in current["coreMemory"]


C_UNESCAPES = {
    ord("a"): 7,
    ord("b"): 8,
    ord("t"): 9,
    ord("n"): 10,
    ord("v"): 11,
    ord("f"): 12,
    ord("r"): 13,
    ord('"'): 34,
    ord("\\"): 92,
}


def unquote_byte_by_byte(printed: bytes) -> bytes:
    """git's C unquoting read byte by byte: a backslash and a letter, or three octal digits; else the byte."""
    if not printed.startswith(b'"') or not printed.endswith(b'"') or len(printed) < 2:
        return printed
    body, out, i = printed[1:-1], bytearray(), 0
    while i < len(body):
        if body[i] == 0x5C and i + 1 < len(body):
            if body[i + 1] in C_UNESCAPES:
                out.append(C_UNESCAPES[body[i + 1]])
                i += 2
                continue
            octal = body[i + 1 : i + 4]
            if len(octal) == 3 and all(0x30 <= c <= 0x37 for c in octal) and octal[0] <= 0x33:  # \000 to \377
                out.append(int(octal, 8))
                i += 4
                continue
        out.append(body[i])
        i += 1
    return bytes(out)


PIECES = [b"\\", b"\\\\", b'"', b"n", b"q", b"0", b"3", b"7", b"8", b"\\101", b"\\3", b"\\777", b"a", b"\xe9"]


@given(st.lists(st.sampled_from(PIECES)).map(b"".join))
def test_git_unquote_reads_c_quoting_as_the_byte_by_byte_rules(body: bytes) -> None:
    quoted = b'"' + body + b'"'
    assert git_unquote(quoted) == unquote_byte_by_byte(quoted)
    if not body.startswith(b'"'):
        assert git_unquote(body) == body  # a name git did not quote is the raw name


def test_git_unquote_undoes_what_git_prints(make_repo, git_env) -> None:
    names = ["tab\there.md", 'quote"d.md', "back\\slash.md", "caf\u00e9.md", "new\nline.md", "bell\x07.md"]
    repo = make_repo({f"system/{name}": "x\n" for name in names})
    printed = repo.git("ls-tree", "-r", "--name-only", "HEAD").split(b"\n")[:-1]
    assert sorted(git_unquote(line) for line in printed) == sorted(f"system/{n}".encode() for n in names)
    assert any(line.startswith(b'"') for line in printed)


def test_compiles_from_one_reading_of_head_equal_separate_ones_and_start_git_once(
    make_repo, git_env, monkeypatch
) -> None:
    import memfs_prompt.compiler as compiler
    from memfs_prompt import PROFILES, compile_system_prompt, resolve_profile
    from memfs_prompt.cli import parse_now

    repo = make_repo(
        {
            "system/a.md": "---\ndescription: d\n---\nA\n",
            "notes/b.md": "B\n",
            "MEMORY.md": "# i\n",
            "skills/s/SKILL.md": "---\nname: s\ndescription: x\n---\nS\n",
            "odd:name.md": "O\n",
        }
    )

    def compiled(profile: str) -> dict:
        return compile_system_prompt(
            repo.path,
            system="{CORE_MEMORY}",
            agent_id="a",
            conversation_id="c",
            now=parse_now("2026-01-01T00:00:00Z"),
            git_env=git_env,
            profile=resolve_profile(profile),
        ).to_json()

    separate = {name: compiled(name) for name in PROFILES}
    opened = []
    monkeypatch.setattr(compiler, "open_committed_head", lambda *a: opened.append(a) or open_committed_head(*a))
    with compiler.one_reading_of_head():
        shared = {name: compiled(name) for name in PROFILES}
    assert shared == separate
    assert len(opened) == 1 and len({json.dumps(r, sort_keys=True) for r in separate.values()}) > 1
