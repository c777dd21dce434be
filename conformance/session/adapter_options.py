"""The adapter's options, given as ``KEY=VALUE`` on a command line, as a mapping."""

from __future__ import annotations

from collections.abc import Iterable


def parse(items: Iterable[str], flag: str) -> dict[str, str]:
    """``KEY=VALUE`` items as a mapping (the key stripped, the value as given; a later
    key wins).  ValueError, one line naming ``flag`` and the item, for an item without
    ``=`` or with a blank key."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} {item!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out
