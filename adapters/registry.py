"""Resolution of an adapter name to an :class:`~acl_conformance.adapters.base.Adapter`.

A name is one of:

- ``sim``: the bundled simulator (built in);
- ``module:attribute``: ``attribute`` of importable ``module`` (dots allowed in
  both), which is an Adapter instance, an Adapter class, or a factory; a class
  or factory is called with the options as keyword arguments (string values);
- the name of an entry point in the group ``acl_conformance.adapters``, whose
  object is treated like ``module:attribute``.

Every failure raises :class:`AdapterResolutionError`, whose message is one
line that stands alone: what was tried, what went wrong, what is available.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from .base import Adapter

ENTRY_POINT_GROUP = "acl_conformance.adapters"
BUILTIN = "sim"


class AdapterResolutionError(Exception):
    """An adapter name could not be turned into an adapter; the message is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(_one_line(message))


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


_FOUND: dict[tuple[str, ...], dict[str, importlib.metadata.EntryPoint]] = {}


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    # Scanning every installed distribution takes milliseconds, and a backend that is
    # started afresh for each example is resolved as often: kept per sys.path.
    key = tuple(sys.path)
    if key not in _FOUND:
        found: dict[str, importlib.metadata.EntryPoint] = {}
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(ep.name, ep)  # the first distribution on sys.path wins
        _FOUND.clear()
        _FOUND[key] = found
    return _FOUND[key]


def available() -> list[str]:
    """Every name ``resolve`` accepts besides ``module:attribute``: built-in first."""
    return [BUILTIN, *sorted(n for n in _entry_points() if n != BUILTIN)]


def _available_text() -> str:
    return f"available: {', '.join(available())}, or module:attribute"


def _error(name: str, what: str) -> AdapterResolutionError:
    return AdapterResolutionError(f"adapter {name!r}: {what}; {_available_text()}")


def _describe(obj: object) -> str:
    return f"{type(obj).__name__} {_one_line(repr(obj))[:80]}"


def _build(name: str, target: str, obj: object, options: Mapping[str, str]) -> Adapter:
    """An adapter from an instance, a class or a factory."""
    if isinstance(obj, Adapter):
        if options:
            raise _error(name, f"{target} is an adapter instance and takes no options")
        return obj
    if isinstance(obj, type) and not issubclass(obj, Adapter):
        raise _error(name, f"{target} is the class {obj.__name__}, not an Adapter class")
    if not callable(obj):
        raise _error(name, f"{target} is a {_describe(obj)}, not an Adapter, class or factory")
    factory: Callable[..., Any] = obj
    try:
        adapter = factory(**dict(options))
    except Exception as exc:
        args = ", ".join(f"{k}={v!r}" for k, v in options.items())
        raise _error(name, f"{target}({args}) raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(adapter, Adapter):
        raise _error(name, f"{target} returned a {_describe(adapter)}, not an Adapter")
    return adapter


def _load_attribute(name: str) -> object:
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise _error(name, "expected module:attribute with both parts non-empty")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, but also whatever the module raises on import
        raise _error(
            name, f"cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    obj: object = module
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise _error(name, f"module {module_name!r} has no attribute {attribute!r}") from None
    return obj


def resolve(name: str, options: Mapping[str, str] | None = None) -> Adapter:
    """The adapter called ``name``, built with ``options``; AdapterResolutionError if none."""
    opts: Mapping[str, str] = dict(options or {})
    if name == BUILTIN:
        from .simulator import Simulator

        try:
            return Simulator.from_options(opts)
        except (ValueError, TypeError) as exc:
            raise _error(name, f"bad options: {exc}") from exc
    if ":" in name:
        return _build(name, name, _load_attribute(name), opts)
    eps = _entry_points()
    ep = eps.get(name)
    if ep is None:
        raise _error(
            name,
            "unknown: neither built in, nor module:attribute, "
            f"nor an entry point in group {ENTRY_POINT_GROUP!r}",
        )
    try:
        obj = ep.load()
    except Exception as exc:
        raise _error(
            name, f"entry point {ep.value!r} failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    return _build(name, f"entry point {ep.value!r}", obj, opts)
