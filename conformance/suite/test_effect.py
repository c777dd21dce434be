"""Effect: the bytes [offset, offset + count) hold the source; nothing else changes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acl_conformance.conformance import ops
from acl_conformance.conformance.context import Suite
from acl_conformance.conformance.harness import Harness

NEIGHBOURS = ["g_u8", "g_u32", "g_u64", "g_struct12", "g_struct24", "g_arr256", "g_arr4k"]


@pytest.mark.requirement("EFFECT-BYTES", "EFFECT-NO-STRAY", "EFFECT-NEIGHBOURS")
@pytest.mark.parametrize("var", NEIGHBOURS)
@pytest.mark.parametrize("memory", ["pinned", "pageable"])
def test_middle_of_each_variable(harness: Harness, var: str, memory: str) -> None:
    h = harness
    n = ops.size(h, var)
    offset, count = (n // 3, max(1, n // 3)) if n > 2 else (0, n)
    data = ops.pattern(11, count)
    src = h.pinned(count, data) if memory == "pinned" else h.pageable(count, data)
    s = h.stream()
    ops.to_symbol_async(h, var, src, count=count, offset=offset, stream=s)
    ops.sync(h, s)
    assert h.observe(var)[offset : offset + count] == data
    for other in [*NEIGHBOURS, "g_arr1m"]:
        h.observe(other)  # every neighbour: untouched (judged by the model)


@pytest.mark.requirement("EFFECT-BYTES", "EFFECT-NO-STRAY")
@pytest.mark.parametrize("var", ["g_arr1m", "g_arr16m"])
def test_large_variables(harness: Harness, var: str) -> None:
    h = harness
    n = ops.size(h, var)
    h.baseline(var)
    data = ops.pattern(12, n // 4)
    src = h.pinned(len(data), data)
    s = h.stream()
    offset = n - len(data) - 4096
    ops.to_symbol_async(h, var, src, count=len(data), offset=offset, stream=s)
    ops.sync(h, s)
    assert h.observe(var, offset=offset, count=len(data)) == data
    h.observe(var)


@pytest.mark.requirement("EFFECT-BYTES", "EFFECT-NO-STRAY", "EFFECT-NEIGHBOURS")
@given(
    var=st.sampled_from(NEIGHBOURS),
    data=st.data(),
    pinned=st.booleans(),
)
def test_random_copy(acl_suite: Suite, var: str, data: st.DataObject, pinned: bool) -> None:
    with acl_suite.harness() as h:
        n = ops.size(h, var)
        offset = data.draw(st.integers(0, n - 1), label="offset")
        count = data.draw(st.integers(1, n - offset), label="count")
        src_off = data.draw(st.integers(0, 64), label="src_offset")
        content = ops.pattern(13, count + 64)
        src = h.pinned(count + 64, content) if pinned else h.pageable(count + 64, content)
        s = h.stream()
        ops.to_symbol_async(h, var, src, count=count, offset=offset, stream=s, src_offset=src_off)
        ops.sync(h, s)
        for other in NEIGHBOURS:
            h.observe(other)
