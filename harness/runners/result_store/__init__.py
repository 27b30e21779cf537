"""The result store: reference outcomes kept by content, so that a run repeats only what changed.

The package owns three things, and nothing else decides them (docs/scale.md, "The result store"):

- **The key** (`key`): every input a reference's outcome is a function of: the request's bytes as sent,
  the content digest of the repository it names, and the reference's identity (`reference_identity`: the
  verified artifact digest, the runtime binary and its build, the interpreter's flags, reference/driver.mjs
  and the runtime-deps lockfiles, the environment and working directory, the git the reference spawns, and
  the harness code that reads answers). A lifecycle probe is keyed as a unit: its open request, its whole
  step list, the checkout's digest and the harness code that writes its commits.
- **The store** (`store`): one SQLite database, `$LETTA_CONFORMANCE_CACHE/results/store.sqlite` (standard
  library; WAL, so several workers and several runs on one machine share it), bounded by LRU eviction
  (`LETTA_CONFORMANCE_STORE_MAX`, default 512M), managed by `conformance cache`.
- **The runners** (`memoized`): MemoizedReference wraps a reference runner behind the same Runner
  interface (only the real ones, BunReferenceRunner, NodeReferenceRunner, GitReferenceRunner, by exact
  type: a stand-in or a subclass is never memoized); it answers what the store holds, starts the reference
  only at the first request the store cannot answer, and stores what the reference answered when that is a
  record or an exception upstream threw. Errors, crashes, timeouts, `unsupported` and harness bugs are
  never stored. ProbeReplay does the same for one lifecycle probe as a whole. harness.run.session wraps its
  references here, in one place; the implementation under test never passes through.

A request is memoized only when its repository is one the store can vouch for: a directory the session
materialized under `<cache>/repos/<digest>/` and marked complete (harness.repo.build.materialize_repo).
A request naming any other directory (`conformance show`, `diff-repo`, the fuzzer's scratch repositories)
passes through. `LETTA_CONFORMANCE_NO_CACHE=1` (`--no-cache`) turns the store off.
"""

from __future__ import annotations

import os

from harness.runners.result_store.key import reference_identity, repository_root, tree_digest
from harness.runners.result_store.memoized import (
    MemoizedReference,
    ProbeReplay,
    RepositorySteps,
    encode_outcome,
    for_probe,
    memoized,
    served_key,
    storable,
    working_copy,
)
from harness.runners.result_store.store import ResultStore, open_store, store_path

NO_CACHE_ENV = "LETTA_CONFORMANCE_NO_CACHE"


def memoizing() -> bool:
    """Whether runs use the store: yes, unless LETTA_CONFORMANCE_NO_CACHE is set to anything but `0` or ``."""
    return os.environ.get(NO_CACHE_ENV, "") in ("", "0")


__all__ = [
    "NO_CACHE_ENV",
    "MemoizedReference",
    "ProbeReplay",
    "RepositorySteps",
    "ResultStore",
    "encode_outcome",
    "for_probe",
    "memoized",
    "memoizing",
    "open_store",
    "reference_identity",
    "repository_root",
    "served_key",
    "storable",
    "store_path",
    "tree_digest",
    "working_copy",
]
