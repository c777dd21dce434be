"""The suite's proof of power: every mutant is caught, every legal variant passes.

Each (variant, profile) pair runs the suite in a pytest process of its own (see
acl_conformance.conformance.command_line.selfcheck): here a mutant runs the tests of the
requirement it breaks under the standard Hypothesis settings profile (the targeted
mode), and must fail one of them citing that requirement; a combination of bugs runs the
whole suite with a quarter of the standard Hypothesis settings profile's examples per test
and must fail exactly its requirements; a legal variant runs the whole suite and must pass
it, here with 15 examples per test (``_examples``), unless its oddity lies in known
requirements (a mutant of the other profile, or ``Variant.oddity_in``): then it runs the
tests of those requirements only
(``selfcheck.area``).  A legal variant, a combination, or a mutant charged to one
requirement under both profiles runs here under one of them, the two alternating along
the catalogue (the profiles differ in error codes, which such a variant does not turn on;
the three-bugs combination runs under spec in test_cli_run);
``ACL_CONFORMANCE_VARIANTS_BOTH=1`` runs both.  ``acl-conformance selfcheck`` (and ``tox
-e selfcheck``) runs every pair through the whole suite, with the full budget.
"""

from __future__ import annotations

import os

import pytest

from acl_conformance.adapters.variants import BY_NAME
from acl_conformance.adapters.variants import CATALOGUE
from acl_conformance.adapters.variants.catalogue import Variant
from acl_conformance.conformance.command_line import selfcheck
from acl_conformance.reference_impl.catalogue import BY_ID

ELSEWHERE = {
    # passes by recovery, and fails without it: tests/test_isolation_reset.py
    "stream-table-fills",
    # a bug in a call most tests use, run whole under both profiles:
    # tests/test_pervasive_failure.py
    "null-stream-rejected-everywhere",
}


PROFILE_HERE = {
    # tests/test_cli_run.py runs it whole under spec (with and without an expectations
    # file): here it runs under the other profile, not the same run twice
    "three-bugs": "cann",
    # two timing bugs: an earlier session saw a multi-bug example of the machines charged
    # to EFFECT-BYTES as well on a loaded machine (not reproduced since: 14 of 14 exact
    # with 2 and 4 runs at once); the pair that has passed the project's CI is kept here,
    # selfcheck runs both
    "three-bugs-timing": "spec",
}


def _same_charge(v: Variant) -> bool:
    """A mutant that must be charged to one requirement under both profiles: its bug is
    in what happens, and the profiles differ in codes, so one profile here (alternating
    along the catalogue) keeps the project's test time; selfcheck and
    ACL_CONFORMANCE_VARIANTS_BOTH=1 run both.  (A mutant whose requirement differs
    between the profiles runs under both.)"""
    return set(v.catches) == {"spec", "cann"} and len(set(v.catches.values())) == 1


def _pairs() -> list[tuple[str, str]]:
    both = os.environ.get("ACL_CONFORMANCE_VARIANTS_BOTH") == "1"
    out: list[tuple[str, str]] = []
    alternate = 0
    for v in CATALOGUE:
        if (v.name in ELSEWHERE and not both) or v.hunt_only:
            continue  # a hunt-only variant is checked by tests/test_hunt.py
        profiles = [p for v2, p in selfcheck.plan(names=[v.name]) if v2 is v]
        # a combination of bugs runs the whole suite too: one profile each, alternating
        whole = not v.catches or bool(v.breaks)
        if not both and v.name in PROFILE_HERE:
            profiles = [PROFILE_HERE[v.name]]
        elif not both and (whole or _same_charge(v)) and set(profiles) == {"spec", "cann"}:
            profiles = [("spec", "cann")[alternate % 2]]
            alternate += 1
        out += [(v.name, p) for p in profiles]
    return out


PAIRS = _pairs()


def test_catalogue_shape() -> None:
    mutants = [v for v in CATALOGUE if v.sort == "mutant"]
    legal = [v for v in CATALOGUE if v.legal and not v.catches]
    assert len(mutants) >= 20 and len(legal) >= 4
    assert len({v.name for v in CATALOGUE}) == len(CATALOGUE)
    for v in CATALOGUE:
        assert v.description, v.name
        for profile, req in v.catches.items():
            assert req in BY_ID and BY_ID[req].applies_to(profile), (v.name, req)
        assert not set(v.catches) & set(v.legal), v.name
    # the named mutants of the issue are all there
    for name in (
        "bound-lt",
        "bound-one-past",
        "overflow-wraps",
        "d2h-accepted",
        "out-of-enum-accepted",
        "offset-ignored",
        "one-byte-too-many",
        "source-off-by-one",
        "pageable-deferred",
        "stream-order-broken",
        "event-wait-ignored",
        "sync-returns-early",
        "shared-instance",
        "interior-pointer-accepted",
        "null-stream-rejected",
        "count-zero-rejected",
        "rejected-still-enqueues",
        "overflow-invalid-param",
        "destroyed-stream-accepted",
        "registered-is-pageable",
        "pinned-blocks",
        "threads-lose-writes",
        "eager",
        "lazy",
        "random-1",
        "pinned-read-at-call",
        "stream-table-fills",  # issue 19: state that outlives a harness, recovered
    ):
        assert name in BY_NAME, name


def test_unknown_variant_is_a_clear_error() -> None:
    from acl_conformance.adapters.variants import variant

    with pytest.raises(ValueError, match="unknown variant 'nope'; known: bound-lt"):
        variant("nope")


def _examples(v: Variant, profile: str) -> int | None:
    """The budget per Hypothesis test here (None: the standard settings profile's).  A
    mutant run on its requirement's tests stops at its first failure: the whole budget.
    A run of the whole suite (a combination of bugs: a quarter of the standard budget,
    as tests/test_pervasive_failure.py runs its bugs; a legal variant: about a seventh)
    keeps the project's test time; selfcheck runs every pair with the whole budget."""
    if v.breaks and v.is_mutant(profile):
        return 25
    if v.is_mutant(profile) or selfcheck.area(v, profile):
        return None
    return 15


@pytest.mark.parametrize("name,profile", PAIRS, ids=[f"{n}-{p}" for n, p in PAIRS])
def test_variant(name: str, profile: str) -> None:
    v = BY_NAME[name]
    r = selfcheck.check(
        v,
        profile,
        timeout=600,
        examples=_examples(v, profile),
        targeted=True,  # a combination of bugs runs the whole suite anyway
    )
    if v.is_mutant(profile):
        assert r.result == "caught", (
            f"mutant {name} ({v.description}) survived under {profile}: no failure cites "
            f"{r.requirement}; failures cited {r.failed_requirements} in {r.failing_tests[:5]}; {r.detail}"
        )
    else:
        assert r.result == "accepted", (
            f"legal variant {name} ({v.description}) was rejected under {profile}: "
            f"{r.failing_tests[:5]} {r.failed_requirements}; {r.detail}"
        )
