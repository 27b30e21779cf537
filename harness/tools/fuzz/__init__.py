"""Fuzzing: Hypothesis strategies for repositories and inputs (strategies, shapes, layouts, lifecycle,
repertoire) and the campaign that compiles them on both sides and keeps each new divergence, reduced."""
