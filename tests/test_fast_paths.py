"""The port's fast paths (issue 9) give what the slow, obviously-right ways give.

- (collation keys of ASCII strings equal ICU's: tests/test_collation.py);
- `git_quotes_path` is git's rule (control bytes, DEL, `"`, `\\`, non-ASCII) on every byte;
- GetSubstitution's `$` patterns follow the ECMAScript steps, transcribed below;
- blobs are fetched by the listed oid only where that is what `HEAD:<path>` names.
"""

from __future__ import annotations

import subprocess

from hypothesis import given
from hypothesis import strategies as st

from memfs_prompt.git_head import open_committed_head
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
    expected = subprocess.run(["git", "ls-tree", "-r", "--name-only", "-z", "HEAD"], cwd=repo.path, env=git_env,
                              capture_output=True, check=True).stdout.split(b"\0")[:-1]  # fmt: skip
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
        return compile_system_prompt(repo.path, system="{CORE_MEMORY}", agent_id="a", conversation_id="c",
                                     now=parse_now("2026-01-01T00:00:00Z"), git_env=env).to_json()  # fmt: skip

    current = compiled(git_env)
    assert git_head._git_lacks_batch_command is False
    older = compiled({**git_env, "PATH": f"{old_git}:{git_env['PATH']}"})
    assert git_head._git_lacks_batch_command is True  # learnt, and plain --batch used from then on
    assert older == current and "<projection>" in current["coreMemory"]
