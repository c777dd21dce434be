"""The symbol table: exact host shadow address -> variable.

As in CANN's SymbolTable (an exact ``std::map::find`` on the host pointer),
only the exact shadow address of a variable is a symbol; a pointer into the
middle of a variable, into the padding after it, or anywhere else is not.
"""

from __future__ import annotations

from collections.abc import Iterable

from .layout import Variable


class SymbolTable:
    """Maps a shadow address to its variable; nothing else is a symbol."""

    def __init__(self, variables: Iterable[Variable]) -> None:
        self._by_shadow: dict[int, Variable] = {v.shadow: v for v in variables}

    def lookup(self, symbol: int) -> Variable | None:
        """The variable whose shadow address is exactly ``symbol``, else None."""
        return self._by_shadow.get(symbol)

    def __len__(self) -> int:
        return len(self._by_shadow)
