"""Effect: the bytes [offset, offset + count) hold the source; nothing else changes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.session.context import Suite
from acl_conformance.conformance.suite.suite_helpers import LARGE_VARS
from acl_conformance.conformance.suite.suite_helpers import MEMORIES
from acl_conformance.conformance.suite.suite_helpers import SMALL_VARS
from acl_conformance.conformance.suite.suite_helpers import copy_and_synchronize
from acl_conformance.conformance.suite.suite_helpers import host_buffer

NEIGHBOURS = SMALL_VARS
"""Every variable but the large ones: each one's neighbours are looked at after a copy."""


@pytest.mark.requirement("EFFECT-BYTES", "EFFECT-NO-STRAY", "EFFECT-NEIGHBOURS")
@pytest.mark.parametrize("var", NEIGHBOURS)
@pytest.mark.parametrize("memory", MEMORIES)
def test_middle_of_each_variable(harness: Harness, var: str, memory: str) -> None:
    h = harness
    n = ops.size(h, var)
    offset, count = (n // 3, max(1, n // 3)) if n > 2 else (0, n)
    data = ops.pattern(11, count)
    src = host_buffer(h, memory, count, data)
    copy_and_synchronize(h, var, src, count=count, offset=offset)
    assert h.observe(var)[offset : offset + count] == data
    for other in [*NEIGHBOURS, "g_arr1m"]:
        h.observe(other)  # every neighbour: untouched (judged by the model)


@pytest.mark.requirement("EFFECT-BYTES", "EFFECT-NO-STRAY")
@pytest.mark.parametrize("var", LARGE_VARS)
def test_large_variables(harness: Harness, var: str) -> None:
    h = harness
    n = ops.size(h, var)
    h.baseline(var)
    data = ops.pattern(12, n // 4)
    src = h.pinned(len(data), data)
    offset = n - len(data) - 4096
    copy_and_synchronize(h, var, src, count=len(data), offset=offset)
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
        src = host_buffer(h, "pinned" if pinned else "pageable", count + 64, content)
        copy_and_synchronize(h, var, src, count=count, offset=offset, src_offset=src_off)
        for other in NEIGHBOURS:
            h.observe(other)
