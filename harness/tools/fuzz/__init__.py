"""harness/tools/fuzz: see docs/harness.md."""
