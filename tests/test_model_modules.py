"""The model's parts check their own wiring when imported: handlers and requirement IDs."""

from __future__ import annotations

import dataclasses

import pytest

from acl_conformance.reference_impl import apply, effects
from acl_conformance.reference_impl.catalogue import BY_ID
from acl_conformance.reference_impl.requirement_ids import STREAM_FIFO, req

EFFECTS = [
    c
    for c in vars(effects).values()
    if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == effects.__name__
]


def test_every_effect_class_has_one_handler() -> None:
    assert len(EFFECTS) >= 20
    assert set(apply.HANDLERS) == set(EFFECTS)


def test_the_table_check_can_fail() -> None:
    pairs = apply._TABLE
    with pytest.raises(RuntimeError, match="without a handler"):
        apply._table(pairs[1:])
    with pytest.raises(RuntimeError, match="two handlers"):
        apply._table((*pairs, pairs[0]))
    with pytest.raises(RuntimeError, match="not effects"):
        apply._table((*pairs, (int, pairs[0][1])))


def test_requirement_ids_are_checked() -> None:
    assert STREAM_FIFO == "STREAM-FIFO" and STREAM_FIFO in BY_ID
    with pytest.raises(ValueError, match="not a requirement"):
        req("STREAM-FIF0")
