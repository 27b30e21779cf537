"""Verdicts: whether and how two records differ (diff, text), what the verdict is (judge), and how a divergence
is characterised for reduction and fuzzing (signature)."""
