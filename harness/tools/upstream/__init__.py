"""harness/tools/upstream: see docs/harness.md."""
