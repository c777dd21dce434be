"""A synchronous aclrtMemcpyToSymbol whose bound is ``count <= size - offset`` in size_t
(issue 34): an offset past the end wraps the bound, the copy is accepted and written past
the variable.  It was caught under cann only (a far offset faults in the device copy with
another code than CANN's), CONFORMANT under spec: no test made the synchronous copy with
an offset past the end that still lands in device memory.  test_bounds'
``test_offset_past_the_end_with_a_small_count`` makes it, for each of the four copies."""

from __future__ import annotations

import pytest

from acl_conformance.adapters.variants import BY_NAME
from acl_conformance.conformance.authoring import defects
from acl_conformance.conformance.command_line import selfcheck
from acl_conformance.conformance.suite import test_bounds

NAME = "sync-bound-wraps-past-the-end"
TEST = "test_offset_past_the_end_with_a_small_count"


def test_the_suite_makes_every_copy_with_an_offset_past_the_end() -> None:
    assert set(test_bounds.COPY_CALLS) == defects.COPIES


@pytest.mark.parametrize("profile", ["spec", "cann"])
def test_the_wrapping_bound_is_caught_under_both_profiles(profile: str) -> None:
    v = BY_NAME[NAME]
    assert v.catches == {"spec": "TOSYMBOL-SYNC", "cann": "TOSYMBOL-SYNC"}
    r = selfcheck.check(v, profile, timeout=600, targeted=True)
    assert r.result == "caught", (
        f"{NAME} survived under {profile}: failures cited {r.failed_requirements} in "
        f"{r.failing_tests[:5]}; {r.detail}"
    )
    if profile == "spec":
        # the one test that makes the call: the far offsets of test_hygiene fault with
        # some error code, which spec accepts
        assert any(TEST in t for t in r.failing_tests), r.failing_tests
