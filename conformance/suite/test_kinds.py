"""Kinds: only ACL_MEMCPY_HOST_TO_DEVICE and ACL_MEMCPY_DEFAULT are accepted."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.session.context import Suite
from acl_conformance.conformance.suite.suite_helpers import MEMORIES
from acl_conformance.conformance.suite.suite_helpers import copy_and_synchronize
from acl_conformance.conformance.suite.suite_helpers import pattern_buffer
from acl_conformance.reference_impl.constants import INT32_MAX
from acl_conformance.reference_impl.constants import MemcpyKind

VAR = "g_arr256"
REJECTED_IN_ENUM = [
    k
    for k in MemcpyKind
    if k not in (MemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE, MemcpyKind.ACL_MEMCPY_DEFAULT)
]
OUTSIDE_ENUM = [-1, 8, 999, INT32_MAX, -(2**31)]


@pytest.mark.requirement("KIND-ACCEPTED", "KIND-DEFAULT-HOST-SOURCE", "EFFECT-BYTES")
@pytest.mark.parametrize("kind", [ops.H2D, ops.DEFAULT], ids=["HOST_TO_DEVICE", "DEFAULT"])
@pytest.mark.parametrize("memory", MEMORIES)
def test_supported_kinds_copy(harness: Harness, kind: int, memory: str) -> None:
    h = harness
    src = pattern_buffer(h, memory, 1, 64)
    copy_and_synchronize(h, VAR, src, count=32, offset=8, kind=kind)
    assert h.observe(VAR)[8:40] == ops.pattern(1, 32)


@pytest.mark.requirement("KIND-REJECTED", "HYGIENE-NO-WRITE")
@pytest.mark.parametrize("kind", REJECTED_IN_ENUM, ids=lambda k: k.name)
def test_other_enum_kinds_are_rejected(harness: Harness, kind: MemcpyKind) -> None:
    h = harness
    src = h.pinned(64, ops.pattern(2, 64))
    s = h.stream()
    r = ops.to_symbol_async(h, VAR, src, count=16, kind=int(kind), stream=s)
    assert not r.ok
    ops.sync(h, s)
    h.observe(VAR)  # unchanged: judged by the model


@pytest.mark.requirement("KIND-OUT-OF-ENUM", "HYGIENE-NO-WRITE")
@pytest.mark.parametrize("kind", OUTSIDE_ENUM)
def test_kinds_outside_the_enum_are_rejected(harness: Harness, kind: int) -> None:
    h = harness
    src = h.pageable(64, ops.pattern(3, 64))
    r = ops.to_symbol_async(h, VAR, src, count=16, kind=kind)
    assert not r.ok
    h.observe(VAR)


@pytest.mark.requirement("KIND-ACCEPTED", "KIND-REJECTED", "KIND-OUT-OF-ENUM")
@given(kind=st.integers(-(2**31), 2**31 - 1))
def test_any_int32_kind(acl_suite: Suite, kind: int) -> None:
    with acl_suite.harness() as h:
        src = h.pageable(16, ops.pattern(4, 16))
        r = ops.to_symbol_async(h, "g_u64", src, count=8, kind=kind)
        assert r.ok == (kind in (ops.H2D, ops.DEFAULT))
        h.observe("g_u64")
