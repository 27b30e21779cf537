"""`python -m benchmarks.collation`: the port's localeCompare order against bun's (and node's), on generated pairs.

Strings are drawn from the whole assigned repertoire up to the pinned ICU's Unicode version
(17.0), weighted toward what the port got wrong before it used ICU: characters encoded after
Unicode 9, Han (radicals, extensions, compatibility ideographs), combining sequences (marks in
and out of canonical order), noncharacters and lone surrogates, numeric characters. Pairs are
independent strings, strings with a shared prefix, one-unit mutations (a neighbouring code point,
an inserted or dropped unit) and variants (NFC/NFD, case, an ignorable inserted).

bun (the pinned reference runtime) says the order: `Math.sign(a.localeCompare(b))`. The port's
order is the sign of comparing `memfs_prompt.collation.locale_compare_key`s. node (the PyPI
wheels' Node, another ICU) is asked too, and where it differs from bun that is a runtime fact
(the harness reports it as runtime-divergence), not a port failure. With pyuca importable, the
previous collation (pyuca 1.2, UCA 9.0) is scored as well.

    python -m benchmarks.collation --pairs 200000 --seed 1 [--no-node] [--examples 8]

Exits 1 when the port and bun disagree on any pair.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import random
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from memfs_prompt import collation

ORACLE = """import { readFileSync } from "node:fs";
const pairs = JSON.parse(readFileSync(0, "utf8"));
const signs = pairs.map(([a, b]) => Math.sign(a.localeCompare(b)));
process.stdout.write(JSON.stringify({
  runtime: typeof Bun === "undefined" ? `node ${process.version}` : `bun ${Bun.version}`,
  icu: process.versions.icu, unicode: process.versions.unicode, signs }));
"""

# ICU property numbers (unicode/uchar.h, uscript.h)
_UCHAR_SCRIPT, _USCRIPT_HAN = 0x100A, 17
_GC_UNASSIGNED, _GC_SURROGATE, _GC_PRIVATE_USE = 0, 18, 17
_GC_MARKS, _GC_NUMBERS, _GC_LETTERS = {6, 7, 8}, {9, 10, 11}, {1, 2, 3, 4, 5}
RECENT_AFTER = (9, 0)  # pyuca's table is UCA 9.0


@functools.cache
def repertoire() -> dict[str, list[int]]:
    """Code points by class, from the pinned ICU's character data (Unicode 17.0 for ICU 78)."""
    char_type = collation.icu_function("u_charType", ctypes.c_int8, ctypes.c_int32)
    char_age = collation.icu_function("u_charAge", None, ctypes.c_int32, ctypes.c_void_p)
    int_property = collation.icu_function("u_getIntPropertyValue", ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)
    age = (ctypes.c_uint8 * 4)()
    classes: dict[str, list[int]] = {
        k: [] for k in ("assigned", "recent", "newest", "han", "marks", "numeric", "letters")
    }
    planes = [*range(0, 0x40000), *range(0xE0000, 0xF0000)]  # planes 4-13 hold nothing but noncharacters
    for code in planes:
        gc = char_type(code)
        if gc in (_GC_UNASSIGNED, _GC_SURROGATE):
            continue
        classes["assigned"].append(code)
        char_age(code, age)
        if (age[0], age[1]) > RECENT_AFTER:
            classes["recent"].append(code)
            if age[0] >= 15:
                classes["newest"].append(code)
        if int_property(code, _UCHAR_SCRIPT) == _USCRIPT_HAN:
            classes["han"].append(code)
        if gc in _GC_MARKS:
            classes["marks"].append(code)
        elif gc in _GC_NUMBERS:
            classes["numeric"].append(code)
        elif gc in _GC_LETTERS:
            classes["letters"].append(code)
    classes["assigned"] += [0xF0000 + i for i in range(0, 0xFFFE, 97)] + [0x100000 + i for i in range(0, 0xFFFE, 89)]
    recent = set(classes["recent"])
    classes["han_recent"] = [c for c in classes["han"] if c in recent]
    noncharacters = [*range(0xFDD0, 0xFDF0), *(p * 0x10000 + low for p in range(17) for low in (0xFFFE, 0xFFFF))]
    classes["special"] = [
        *noncharacters,
        *range(0xD800, 0xD810),
        *range(0xDC00, 0xDC10),
        0xDBFF,
        0xDFFF,
        0xFFFD,
        0xFEFF,
        0x200B,
        0x200D,
        0x034F,
        0xE000,
        0xF8FF,
        0xF0000,
        0x10FFFD,
    ]
    return classes


UNIT_WEIGHTS = {
    "assigned": 14,
    "recent": 12,
    "newest": 8,
    "han": 10,
    "han_recent": 5,
    "combining": 15,
    "special": 8,
    "numeric": 12,
    "ascii": 16,
}
ASCII = [*range(0x20, 0x7F), 0x00, 0x09, 0x0A, 0x1F, 0x7F]


def _unit(rng: random.Random, kind: str) -> str:
    classes = repertoire()
    if kind == "ascii":
        return chr(rng.choice(ASCII))
    if kind == "combining":
        base = rng.choice([*map(ord, "aeiouAEOnNcCsSzZ"), *rng.sample(classes["letters"], 2), 0x1100, 0xAC00])
        if base == 0x1100:  # a conjoining jamo sequence (L V [T]), which composes to a syllable
            return "".join(chr(c) for c in (0x1100 + rng.randrange(19), 0x1161 + rng.randrange(21))) + (
                chr(0x11A8 + rng.randrange(27)) if rng.random() < 0.5 else ""
            )
        common = [0x0300, 0x0301, 0x0302, 0x0303, 0x0308, 0x0323, 0x0327, 0x0328, 0x031B, 0x0345, 0x05B0, 0x093C]
        marks = [
            rng.choice(common) if rng.random() < 0.6 else rng.choice(classes["marks"]) for _ in range(rng.randint(1, 3))
        ]
        return chr(base) + "".join(map(chr, marks))
    return chr(rng.choice(classes[kind]))


def random_string(rng: random.Random, kinds: list[str] | None = None) -> tuple[str, str]:
    """(a string of 1-5 units, the class of its first unit)."""
    names, weights = list(UNIT_WEIGHTS), list(UNIT_WEIGHTS.values())
    chosen = kinds or rng.choices(names, weights, k=rng.randint(1, 5))
    return "".join(_unit(rng, kind) for kind in chosen), chosen[0]


def _mutated(rng: random.Random, value: str) -> str:
    units = list(value)
    at = rng.randrange(len(units))
    roll = rng.random()
    if roll < 0.5:
        code = ord(units[at]) + rng.choice([-3, -2, -1, 1, 2, 3])
        units[at] = chr(min(max(code, 0), 0x10FFFF))
    elif roll < 0.75:
        units.insert(at, random_string(rng)[0])
    elif len(units) > 1:
        del units[at]
    else:
        units.append(random_string(rng)[0])
    return "".join(units)


def _variant(rng: random.Random, value: str) -> str:
    roll = rng.random()
    if roll < 0.35:
        return unicodedata.normalize(rng.choice(["NFC", "NFD", "NFKD"]), value)
    if roll < 0.6:
        return value.swapcase()
    at = rng.randrange(len(value) + 1)
    return value[:at] + rng.choice(["\u0000", "\u200b", "\u00ad", "\u034f", "\ufeff", "\u0301"]) + value[at:]


def generate_pairs(count: int, seed: int) -> list[tuple[str, str, str]]:
    """`count` (left, right, class) triples, the same for the same seed."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str, str]] = []
    while len(pairs) < count:
        left, kind = random_string(rng)
        roll = rng.random()
        if roll < 0.35:
            right = random_string(rng)[0]
        elif roll < 0.65:
            tail, kind = random_string(rng)
            right = left + tail
            left += random_string(rng, [kind])[0]
        elif roll < 0.85:
            right = _mutated(rng, left)
        else:
            right = _variant(rng, left)
        pairs.append((left, right, kind))
    return pairs


def run_oracle(runtime: Path, pairs: list[tuple[str, str, str]], timeout: float = 600.0) -> dict[str, Any]:
    """Run ORACLE under bun or node: {runtime, icu, unicode, signs}."""
    with tempfile.TemporaryDirectory(prefix="collation-") as tmp:
        script = Path(tmp) / "oracle.mjs"
        script.write_text(ORACLE, encoding="utf-8")
        payload = json.dumps([[a, b] for a, b, _ in pairs], ensure_ascii=True).encode("ascii")
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC"}
        done = subprocess.run(
            [str(runtime), str(script)], input=payload, capture_output=True, env=env, timeout=timeout, check=False
        )
    if done.returncode != 0:
        raise RuntimeError(f"{runtime} failed ({done.returncode}): {done.stderr.decode('utf-8', 'replace')[-2000:]}")
    return json.loads(done.stdout)


def port_signs(pairs: list[tuple[str, str, str]]) -> list[int]:
    key = collation.locale_compare_key
    return [(ka > kb) - (ka < kb) for ka, kb in ((key(a), key(b)) for a, b, _ in pairs)]


def pyuca_signs(pairs: list[tuple[str, str, str]]) -> list[int] | None:
    """The collation the port used before ICU (pyuca 1.2), when pyuca is importable."""
    try:
        import pyuca  # type: ignore[import-untyped]
    except ImportError:
        return None
    collator = pyuca.Collator()
    key = functools.lru_cache(maxsize=None)(lambda s: tuple(collator.sort_key(s)))
    return [(ka > kb) - (ka < kb) for ka, kb in ((key(a), key(b)) for a, b, _ in pairs)]


def _codes(value: str) -> str:
    return " ".join(f"{ord(c):04X}" for c in value)


def compare(label: str, pairs: list[tuple[str, str, str]], ours: list[int], theirs: list[int], examples: int) -> int:
    differ = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    by_class = Counter(pairs[i][2] for i in differ)
    print(
        f"{label}: {len(differ)} of {len(pairs)} pairs order differently"
        + (f" (by class of the first unit: {dict(sorted(by_class.items()))})" if differ else "")
    )
    for i in differ[:examples]:
        left, right, kind = pairs[i]
        print(f"  [{kind}] {_codes(left)}  vs  {_codes(right)}: {ours[i]:+d} / {theirs[i]:+d}")
    return len(differ)


def newest_age(value: str) -> tuple[int, int]:
    """The Unicode version (major, minor) that assigned the newest character of `value`, by the pinned ICU."""
    char_age = collation.icu_function("u_charAge", None, ctypes.c_int32, ctypes.c_void_p)
    age = (ctypes.c_uint8 * 4)()
    newest = (0, 0)
    for ch in value:
        char_age(ord(ch), age)
        newest = max(newest, (age[0], age[1]))
    return newest


def explain_runtime_difference(
    pairs: list[tuple[str, str, str]], bun: dict[str, Any], other: dict[str, Any], examples: int
) -> None:
    """Split the pairs two runtimes order differently: those holding a character the other's Unicode lacks, the rest."""
    major, minor = (int(part) for part in str(other["unicode"]).split(".")[:2])
    differ = [i for i, (a, b) in enumerate(zip(bun["signs"], other["signs"], strict=True)) if a != b]
    rest = [i for i in differ if newest_age(pairs[i][0] + pairs[i][1]) <= (major, minor)]
    print(
        f"  {len(differ) - len(rest)} hold a character encoded after Unicode {other['unicode']} "
        f"({other['runtime']}'s); the other {len(rest)}:"
    )
    for i in rest[: max(examples, 20)]:
        left, right, kind = pairs[i]
        print(f"  [{kind}] {_codes(left)}  vs  {_codes(right)}: {bun['signs'][i]:+d} / {other['signs'][i]:+d}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.collation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--examples", type=int, default=8, help="differing pairs to print per comparison")
    parser.add_argument("--no-node", action="store_true", help="do not ask the PyPI wheels' node")
    parser.add_argument("--no-pyuca", action="store_true", help="do not score the previous collation (pyuca)")
    args = parser.parse_args(argv)
    from harness.acquire.releases import ensure_bun

    started = time.perf_counter()
    pairs = generate_pairs(args.pairs, args.seed)
    print(
        f"generated {len(pairs)} pairs (seed {args.seed}) in {time.perf_counter() - started:.1f} s; classes "
        f"{dict(sorted(Counter(k for *_, k in pairs).items()))}"
    )
    started = time.perf_counter()
    ours = port_signs(pairs)
    info = collation.info()
    print(
        f"port: ICU {info['icu']}, Unicode {info['unicode']}, {info['binding']}: "
        f"{2 * len(pairs)} keys in {time.perf_counter() - started:.2f} s"
    )
    bun = run_oracle(ensure_bun(), pairs)
    print(f"{bun['runtime']}: ICU {bun['icu']}, Unicode {bun['unicode']}")
    failures = compare(f"port vs {bun['runtime']}", pairs, ours, bun["signs"], args.examples)
    if not args.no_node:
        node = _node()
        if node is None:
            print("node: the PyPI wheels' node is not in the cache (skipped)")
        else:
            answer = run_oracle(node, pairs)
            print(f"{answer['runtime']}: ICU {answer['icu']}, Unicode {answer['unicode']}")
            compare(
                f"{bun['runtime']} vs {answer['runtime']} (a runtime fact)",
                pairs,
                bun["signs"],
                answer["signs"],
                args.examples,
            )
            explain_runtime_difference(pairs, bun, answer, args.examples)
    old = None if args.no_pyuca else pyuca_signs(pairs)
    if old is not None:
        compare(f"previous collation (pyuca 1.2, UCA 9.0) vs {bun['runtime']}", pairs, old, bun["signs"], args.examples)
    return 1 if failures else 0


def _node() -> Path | None:
    from harness.acquire.releases import cache_root

    found = sorted((cache_root() / "node").glob("*/node"))
    return found[0] if found else None


if __name__ == "__main__":
    sys.exit(main())
