"""Releases side by side: the matrix of cases x references, drift between neighbours, the CI gate, bisection
between releases, pinning a new release and sharding the corpus."""
