"""Repositories: the one interpreter of a repo spec (spec), building it as git objects (build), reading a real
repository back as a model (snapshot), and the isolated git environment (gitenv)."""
