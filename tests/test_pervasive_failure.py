"""A bug in a call most tests use, and bugs that other requirements observe (issue 21,
item 2): the whole suite runs against the backend, as a vendor runs it, and exactly the
requirements the bug breaks fail; every other requirement is decided (none ``unknown``),
none is charged as a bystander.

- ``null-stream-rejected-everywhere``: every call that takes a stream rejects NULL.  Most
  tests copy on the NULL stream or synchronise it; once STREAM-NULL-DEFAULT has failed,
  the steps that do not care which stream they use take a stream of their own, and a
  refusal on NULL is charged to STREAM-NULL-DEFAULT whatever call it was (a sync, a query,
  an event, a read), not to the sync's, query's, event's or read's own requirement.
- ``from-ignores-offset-zero-filled``: a read that lies (aclrtMemcpyFromSymbol ignores its
  offset) on a backend whose variables start zero-filled, as CANN's do, so that the wrong
  bytes look like a copy that did not land: charged to the read only.
- ``pageable-skips-the-drain``: a pageable copy that does not drain its stream: charged to
  the drain only, not to the pageable call's blocking, nor, with several host threads, to
  CONCURRENCY-THREADS.

Each run is the whole suite with a quarter of the standard Hypothesis settings profile's
examples per test (as tests/test_variants.py runs the legal variants).
"""

from __future__ import annotations

import pytest

from acl_conformance.adapters.variants import BY_NAME
from acl_conformance.conformance.command_line import selfcheck

CASES = [
    ("null-stream-rejected-everywhere", "spec", ["STREAM-NULL-DEFAULT"]),
    ("null-stream-rejected-everywhere", "cann", ["STREAM-NULL-DEFAULT"]),
    ("from-ignores-offset-zero-filled", "spec", ["FROMSYMBOL-BYTES"]),
    ("pageable-skips-the-drain", "cann", ["PAGEABLE-DRAINS-STREAM"]),
]


@pytest.mark.parametrize("name,profile,breaks", CASES, ids=[f"{n}-{p}" for n, p, _ in CASES])
def test_only_what_the_bug_breaks_fails_and_the_rest_is_decided(
    name: str, profile: str, breaks: list[str]
) -> None:
    v = BY_NAME[name]
    assert v.is_mutant(profile) and v.catches[profile] == breaks[0]
    r = selfcheck.check(v, profile, timeout=600, examples=25)
    assert r.result in ("caught", "survived"), r.detail  # the run finished
    assert r.failed_requirements == sorted(breaks), (
        f"{name} under {profile}: requirements not passing {r.failed_requirements} "
        f"(expected to fail: {breaks}); failing tests {r.failing_tests[:5]}; {r.detail}"
    )
    assert r.ok, r.detail
