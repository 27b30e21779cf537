"""Implementations behind one interface: the in-process Python port, a bun reference process,
any command speaking the JSON-lines protocol. Adding one is one new module here."""

from .base import CompileRequest, Outcome, Runner

__all__ = ["CompileRequest", "Outcome", "Runner"]
