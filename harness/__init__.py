"""letta-conformance harness: YAML scenarios -> git repos -> every implementation -> byte comparison -> reports.

Stages, one module each: scenario (load + validate), repo (materialize), runners (implementations),
compare (byte diff), run (orchestration and verdicts), report (JSON, JUnit, HTML), cli.
"""
