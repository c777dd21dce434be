"""What test_profile_rules.py and test_profile_rules_other_calls.py share: helpers, fixtures and case tables."""

from __future__ import annotations

from typing import Any

from world import PAGEABLE
from world import PINNED
from world import W
from world import make_world

from acl_conformance.reference_impl.constants import INT32_MAX
from acl_conformance.reference_impl.constants import SIZE_MAX
from acl_conformance.reference_impl.outcome import AllowedAnswers

SUCCESS, REJECT, EITHER = "success", "reject", "either"


SOME_ERRORS = (1, 100000, 107000, 999999)


def codes(outcome: AllowedAnswers) -> set[int] | None:
    """The explicit codes an outcome allows, or None if it allows any error."""
    out: set[int] = set()
    for alt in outcome.alternatives:
        if alt.codes.values is None:
            return None
        out |= alt.codes.values
    return out


def spec_class(outcome: AllowedAnswers) -> str:
    ok = outcome.accepts_success()
    err = all(
        c in alt.codes
        for alt in outcome.alternatives
        if alt.codes.values is None
        for c in SOME_ERRORS
    )
    any_err = any(alt.codes.values is None for alt in outcome.alternatives)
    if ok and any_err and err:
        return EITHER
    if ok and not any_err:
        return SUCCESS
    if not ok and any_err:
        return REJECT
    return f"odd: {outcome.allowed_codes()}"


def base_to(w: W, **over: Any) -> dict[str, Any]:
    args: dict[str, Any] = dict(
        symbol=w.sym["g_arr256"], src=PINNED, count=16, offset=0, kind=1, stream=w.stream
    )
    args.update(over)
    return args


DESTROYED = 0x999


def world_with_dead_stream(profile: str) -> W:
    w = make_world(profile)
    w.ok("create_stream", outputs={"stream": DESTROYED})
    w.ok("destroy_stream", stream=DESTROYED)
    return w


TO_CASES: list[tuple[str, dict[str, Any], set[int], str, str]] = [
    # (case, overrides, cann codes, spec class, requirement of the primary alternative)
    ("H2D", {}, {0}, SUCCESS, "KIND-ACCEPTED"),
    ("DEFAULT", {"kind": 4}, {0}, SUCCESS, "KIND-ACCEPTED"),
    *[(f"kind {k}", {"kind": k}, {100000}, REJECT, "KIND-REJECTED") for k in (0, 2, 3, 5, 6, 7)],
    *[
        (f"kind {k}", {"kind": k}, {100000}, REJECT, "KIND-OUT-OF-ENUM")
        for k in (-1, 8, 999, INT32_MAX)
    ],
    ("end exact", {"offset": 240}, {0}, SUCCESS, "BOUNDS-END-EXACT"),
    ("whole variable", {"count": 256}, {0}, SUCCESS, "BOUNDS-END-EXACT"),
    ("one past the end", {"offset": 241}, {100000}, REJECT, "BOUNDS-PAST-END"),
    ("offset at the end", {"offset": 256, "count": 1}, {100000}, REJECT, "BOUNDS-PAST-END"),
    ("count one too many", {"count": 257}, {100000}, REJECT, "BOUNDS-PAST-END"),
    ("offset SIZE_MAX", {"offset": SIZE_MAX, "count": 1}, {500001}, REJECT, "BOUNDS-OVERFLOW"),
    ("sum wraps to 0", {"offset": 2, "count": SIZE_MAX - 1}, {500001}, REJECT, "BOUNDS-OVERFLOW"),
    (
        "sum exactly SIZE_MAX",
        {"offset": 1, "count": SIZE_MAX - 1},
        {100000},
        REJECT,
        "BOUNDS-PAST-END",
    ),
    ("symbol NULL", {"symbol": 0}, {100000}, REJECT, "SYMBOL-NULL"),
    ("symbol unregistered", {"symbol": PAGEABLE}, {107043}, REJECT, "SYMBOL-UNREGISTERED"),
    ("src NULL", {"src": 0}, {100000}, REJECT, "SRC-NULL"),
    ("stream NULL", {"stream": 0}, {0}, SUCCESS, "STREAM-NULL-DEFAULT"),
    ("stream destroyed", {"stream": DESTROYED}, {107017}, REJECT, "STREAM-INVALID-HANDLE"),
    ("stream garbage", {"stream": 0xDEAD}, {107017}, REJECT, "STREAM-INVALID-HANDLE"),
    ("foreign stream, pinned", {"stream": 0x300}, {107003}, EITHER, "STREAM-FOREIGN-DEVICE"),
    (
        "foreign stream, pageable",
        {"stream": 0x300, "src": PAGEABLE},
        {0, 107003},
        EITHER,
        "KIND-ACCEPTED",
    ),
    ("pageable src", {"src": PAGEABLE}, {0}, SUCCESS, "KIND-ACCEPTED"),
    # count == 0 first: everything else wrong still succeeds under cann
    ("count 0", {"count": 0}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, NULL symbol", {"count": 0, "symbol": 0}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, NULL src", {"count": 0, "src": 0}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, bad kind", {"count": 0, "kind": 2}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, bad stream", {"count": 0, "stream": 0xDEAD}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, offset past end", {"count": 0, "offset": 10_000}, {0}, EITHER, "COUNT-ZERO"),
]


ORDER_CASES: list[tuple[str, dict[str, Any], int, str]] = [
    # several wrong arguments: the first failing check in CANN's order decides
    ("NULL symbol before NULL src", {"symbol": 0, "src": 0}, 100000, "SYMBOL-NULL"),
    ("NULL src before kind", {"src": 0, "kind": 2}, 100000, "SRC-NULL"),
    ("kind before lookup", {"kind": 2, "symbol": PAGEABLE}, 100000, "KIND-REJECTED"),
    (
        "lookup before overflow",
        {"symbol": PAGEABLE, "offset": SIZE_MAX},
        107043,
        "SYMBOL-UNREGISTERED",
    ),
    ("overflow before stream", {"offset": SIZE_MAX, "stream": 0xDEAD}, 500001, "BOUNDS-OVERFLOW"),
    ("bounds before stream", {"offset": 250, "stream": 0xDEAD}, 100000, "BOUNDS-PAST-END"),
    (
        "bad stream before foreign check",
        {"stream": 0xDEAD, "src": PINNED},
        107017,
        "STREAM-INVALID-HANDLE",
    ),
]


# --- the reads -------------------------------------------------------------------
def base_from(w: W, **over: Any) -> dict[str, Any]:
    args: dict[str, Any] = dict(
        dst=PINNED,
        dst_max=64,
        symbol=w.sym["g_arr256"],
        count=16,
        offset=0,
        kind=2,
        stream=w.stream,
    )
    args.update(over)
    return args


FROM_CASES: list[tuple[dict[str, Any], set[int], str, str]] = [
    ({}, {0}, SUCCESS, "FROMSYMBOL-BYTES"),
    ({"kind": 4}, {0}, SUCCESS, "FROMSYMBOL-BYTES"),
    *[({"kind": k}, {100000}, REJECT, "FROMSYMBOL-KINDS") for k in (0, 1, 3, 5, 6, 7, -1, 8, 999)],
    ({"dst_max": 15}, {100000}, REJECT, "FROMSYMBOL-DSTMAX"),
    ({"dst_max": 16}, {0}, SUCCESS, "FROMSYMBOL-DSTMAX"),  # dstMax == count: its edge
    ({"dst_max": 17}, {0}, SUCCESS, "FROMSYMBOL-BYTES"),
    ({"dst_max": 15, "kind": 1}, {100000}, REJECT, "FROMSYMBOL-DSTMAX"),
    ({"dst": 0}, {100000}, REJECT, "FROMSYMBOL-BYTES"),
    ({"symbol": 0}, {100000}, REJECT, "FROMSYMBOL-BYTES"),
    ({"symbol": PAGEABLE}, {107043}, REJECT, "FROMSYMBOL-BYTES"),
    ({"offset": 241}, {100000}, REJECT, "FROMSYMBOL-BYTES"),
    ({"offset": SIZE_MAX, "count": 1}, {500001}, REJECT, "FROMSYMBOL-BYTES"),
    ({"count": 0, "dst": 0, "kind": 9}, {0}, EITHER, "FROMSYMBOL-BYTES"),
]
