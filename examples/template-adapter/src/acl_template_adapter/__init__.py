"""A template adapter package for acl-conformance: copy it, rename it, put your runtime in.

``create`` is the factory the entry point names (group ``acl_conformance.adapters``,
see pyproject.toml): the suite calls it with the ``--adapter-option KEY=VALUE``
options as keyword arguments, every value a string.
"""

from __future__ import annotations

from .backend import TemplateAdapter

__all__ = ["TemplateAdapter", "create"]

OPTIONS = ("devices", "schedule", "default_stream")
"""The options this adapter takes (here: some of the bundled simulator's)."""


def create(**options: str) -> TemplateAdapter:
    """The adapter, built from string options; ValueError (one line) for an unknown one."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"unknown option {', '.join(unknown)}; known: {', '.join(OPTIONS)}")
    return TemplateAdapter(options)
