"""letta-conformance harness: YAML cases -> git repositories -> every implementation -> byte comparison -> reports.

Folders in layer order, lowest first; a module imports only its own layer or lower ones (tests/layers.py,
tests/test_layout.py): core (records and small rules) < cases, repo, verdict (reading cases, building
repositories, judging outputs) < acquire, runners (getting references, running implementations) < run (a
session over a corpus) < report (report files) < tools (fuzzing, reduction, releases, history, upstream tests,
mutation) < cli (the command line and the pytest plugin). docs/harness.md describes every module.
"""
