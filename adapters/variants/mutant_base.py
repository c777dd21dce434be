"""What every mutant starts from: the simulator, with lookups the mutants share.

The lookups go through the contract, so that they match the simulator.
"""

from __future__ import annotations

import itertools

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import ACL_SUCCESS


class MutantBase(Simulator):
    """Lookups the mutants share (through the contract, so they match the simulator)."""

    def _size_of(self, symbol: int) -> int | None:
        code, size = super().get_symbol_size(symbol)
        return size if code == ACL_SUCCESS else None

    def _neighbour(self, symbol: int) -> int | None:
        """The variable laid out right after ``symbol`` in device memory."""
        fixtures = self.fixtures()
        for a, b in itertools.pairwise(fixtures):
            if a.address == symbol:
                return b.address
        return None

    def _containing(self, symbol: int) -> tuple[int, int] | None:
        """(variable address, k) for an interior pointer ``symbol`` = variable + k."""
        for f in self.fixtures():
            if f.address < symbol < f.address + f.size:
                return f.address, symbol - f.address
        return None

    def _pageable(self, src: int) -> bool:
        return not self._host.is_pinned(src)
