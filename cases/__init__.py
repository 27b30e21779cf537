"""The conformance corpus as a package, so that pytest finds it installed: `pytest --pyargs letta_conformance.cases`.

No code: the cases are the YAML files in compile/ and lifecycle/ (docs/cases.md); pyproject.toml installs this
folder as `letta_conformance.cases` (harness/core/locations.py).
"""
