"""Upstream's history: every commit's compiler module built from source (scan), the corpus against revisions
(revision_corpus), and the table of where upstream's output changed (table)."""
