"""Repositories: building a case's repo spec (interpreted by core.repospec) as git objects (build, checkout),
reading a real repository back as a model (snapshot), and the isolated git environment (gitenv)."""
