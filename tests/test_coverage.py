"""Coverage: what sizes and offsets a requirement's checks rested on, per kind of host memory.

The model's tally keeps, per requirement and kind of host memory (pinned, pageable,
registered), the smallest and largest count of the successful copies its checks judged
and whether an odd offset was seen; it travels in each test's tally, is merged across
workers and shards, and the reports say it, with a note where a pass rests on small
copies only.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_reports import RUN
from test_reports import SUITE
from test_reports import _results
from test_reports import _row
from test_reports import _test
from test_reports import _validate
from world import PAGEABLE
from world import PINNED
from world import W
from world import make_world

from acl_conformance import reports
from acl_conformance.conformance.command_line import runner
from acl_conformance.conformance.gating import shards
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.evidence import CopyShape
from acl_conformance.reference_impl.evidence import Extent
from acl_conformance.reference_impl.evidence import Tally
from acl_conformance.reports import html
from acl_conformance.reports import markdown
from acl_conformance.reports.evidence_text import coverage_text
from acl_conformance.reports.evidence_text import size_text


@pytest.fixture
def w() -> W:
    return make_world("cann")


def _copy(w: W, src: int, count: int, offset: int = 0, symbol: str = "g_arr4k") -> None:
    w.ok(
        "memcpy_to_symbol_async",
        symbol=w.sym[symbol],
        src=src,
        count=count,
        offset=offset,
        kind=1,
        stream=w.stream,
    )


def test_the_model_keeps_the_extent_of_each_kind(w: W) -> None:
    ev = w.model.tally
    assert not ev.coverage  # the fixture's set-up copies nothing
    _copy(w, PINNED, 16)
    _copy(w, PINNED + 1, 3000, offset=7)
    _copy(w, PAGEABLE, 100)
    _copy(w, PAGEABLE + 2, 40, offset=2)
    w.ok("host_register", ptr=PAGEABLE + 4096, size=4096)
    _copy(w, PAGEABLE + 4096, 4096)
    # A rejected copy moves no bytes: its size is not kept, though its check is counted.
    bounds = w.model.tally.checks["BOUNDS-PAST-END"]
    w.ok("synchronize_stream", stream=w.stream)
    v = w.model.settle(
        w.model.judge(
            "memcpy_to_symbol_async",
            symbol=w.sym["g_u32"],
            src=PINNED,
            count=5000,
            offset=0,
            kind=1,
            stream=w.stream,
        ),
        ACL_ERROR_INVALID_PARAM,
    )
    assert not v and ev.checks["BOUNDS-PAST-END"] == bounds + 1
    assert "BOUNDS-PAST-END" not in ev.coverage
    # So is a copy of no bytes (accepted or not, COUNT-ZERO is checked).
    _copy(w, PINNED, 0)
    assert w.model.tally.checks["COUNT-ZERO"] and "COUNT-ZERO" not in ev.coverage
    codes = ev.coverage["RETURN-CODES"]
    assert set(codes) == {"pinned", "pageable", "registered"}
    assert (codes["pinned"].smallest, codes["pinned"].largest) == (16, 3000)
    assert codes["pinned"].odd_offset and codes["pinned"].odd_host
    assert (codes["pageable"].smallest, codes["pageable"].largest) == (40, 100)
    assert not codes["pageable"].odd_offset and not codes["pageable"].odd_host
    assert codes["registered"].largest == codes["registered"].smallest == 4096
    assert codes["pinned"].copies == 2 and codes["pageable"].copies == 2
    # Only the pageable copies (not the registered one, page-locked) promise completion
    # at their return.
    assert set(ev.coverage["PAGEABLE-BLOCKS"]) == {"pageable"}


def test_a_read_charges_the_copies_it_judged(w: W) -> None:
    """The bytes a read judges are those of the copies it shows: their shapes, not the
    read's own, count toward the requirements of those bytes."""
    _copy(w, PINNED + 1, 33, offset=3)
    w.ok("synchronize_stream", stream=w.stream)
    before = dict(w.model.tally.coverage.get("EFFECT-BYTES") or {})
    assert not before
    expected = bytes(range(1, 34))
    assert not w.observe("g_arr4k", expected, offset=3)
    bytes_ = w.model.tally.coverage["EFFECT-BYTES"]
    assert set(bytes_) == {"pinned"}
    assert (bytes_["pinned"].smallest, bytes_["pinned"].largest) == (33, 33)
    assert bytes_["pinned"].odd_offset and bytes_["pinned"].odd_host
    assert w.model.tally.coverage["PINNED-COMPLETE-AFTER-SYNC"]["pinned"].largest == 33


def test_merge_of_two_workers_keeps_the_widest_extent() -> None:
    a, b = Tally(), Tally()
    a.check_copy(CopyShape("pinned", 16, False, False), "EFFECT-BYTES")
    a.check_copy(CopyShape("pageable", 496, False, True), "EFFECT-BYTES")
    b.check_copy(CopyShape("pinned", 1 << 24, True, False), "EFFECT-BYTES", "PINNED-ASYNC")
    b.check_copy(CopyShape("pinned", 1, False, False), "EFFECT-BYTES")
    # Each worker's tally goes through results.json as JSON: merged as read back.
    total = Tally.total(Tally.from_json(t.to_json()) for t in (a, b))
    pinned = total.coverage["EFFECT-BYTES"]["pinned"]
    assert pinned == Extent(copies=3, smallest=1, largest=1 << 24, odd_offset=True)
    assert total.coverage["EFFECT-BYTES"]["pageable"] == Extent(1, 496, 496, False, True)
    assert total.coverage["PINNED-ASYNC"]["pinned"].smallest == 1 << 24
    assert total.checks["EFFECT-BYTES"] == 4
    # Merging leaves the parts as they were.
    assert a.coverage["EFFECT-BYTES"]["pinned"] == Extent(1, 16, 16, False, False)


def test_a_tally_without_coverage_reads_as_none_known() -> None:
    """Results written before coverage was kept have no ``coverage`` in their tallies."""
    old = {"checks": {"EFFECT-BYTES": 3}, "seen": {}, "declined": {}, "set_aside": {}}
    assert Tally.from_json(old).coverage == {}
    # An extent reads from the compact form results.json keeps, and from the report's.
    e = Extent(3, 1, 4096, True, False)
    assert Extent.from_json(e.to_row()) == Extent.from_json(e.to_json()) == e


def _with_coverage(record: dict[str, Any], tally: Tally) -> dict[str, Any]:
    """``record`` (a test's results record) with ``tally``'s coverage in its tally."""
    record["tally"]["coverage"] = tally.to_json()["coverage"]
    return record


def test_the_report_says_what_sizes_a_pass_rests_on() -> None:
    """Two workers' tests, one with small pageable copies only, one with large pinned ones:
    the row merges them, the schema takes it, and every rendering says it; the terminal
    notes the kind that rests on small copies only."""
    small, large = Tally(), Tally()
    small.check_copy(CopyShape("pageable", 1, False, False), "EFFECT-BYTES")
    small.check_copy(CopyShape("pageable", 496, False, False), "EFFECT-BYTES")
    small.check_copy(CopyShape("pinned", 16, False, False), "EFFECT-BYTES")
    large.check_copy(CopyShape("pinned", 1 << 24, True, False), "EFFECT-BYTES")
    # Large pageable copies elsewhere: pageable memory is small for EFFECT-BYTES only.
    large.check_copy(CopyShape("pageable", 1 << 20, False, False), "PAGEABLE-BLOCKS")
    tests = [
        _with_coverage(_test("t_small", "pass", ["EFFECT-BYTES", "KIND-ACCEPTED"]), small),
        _with_coverage(_test("t_large", "pass", ["EFFECT-BYTES", "PAGEABLE-BLOCKS"]), large),
    ]
    selected = ["EFFECT-BYTES", "KIND-ACCEPTED", "PAGEABLE-BLOCKS"]
    report = reports.build(_results(tests, selected=selected), SUITE, RUN)
    _validate(report)
    row = _row(report, "EFFECT-BYTES")
    assert row["status"] == "pass"
    c = row["coverage"]
    assert c["kinds"]["pinned"] == {
        "copies": 2,
        "smallest": 16,
        "largest": 1 << 24,
        "odd_offset": True,
        "odd_host": False,
    }
    assert c["kinds"]["pageable"]["largest"] == 496
    assert c["small_only"] == ["pageable"] and c["never"] == ["registered"]
    assert _row(report, "KIND-ACCEPTED")["coverage"] is None  # no copy judged under it
    line = (
        "pinned: 16 B to 16 MiB, odd symbol offset seen; "
        "pageable: 1 B to 496 B, no odd offset; registered: never"
    )
    assert coverage_text(c) == line
    md = markdown.render(report)
    md_row = next(x for x in md.splitlines() if x.startswith("| EFFECT-BYTES "))
    assert line in md_row and "smaller than 64 KiB only for pageable memory" in md_row
    assert line in html.render(report)
    terminal = runner.summary_table(report)
    t_row = next(x for x in terminal.splitlines() if x.startswith("EFFECT-BYTES "))
    assert t_row.endswith("small copies only: pageable up to 496 B")
    assert "small copies only" not in next(
        x for x in terminal.splitlines() if x.startswith("KIND-ACCEPTED ")
    )


def test_results_without_coverage_still_make_a_valid_report() -> None:
    """results.json written before coverage was kept: no coverage, no line, a valid report."""
    old = _test("t_a", "pass", ["EFFECT-BYTES"])
    assert "coverage" not in old["tally"]
    report = reports.build(_results([old], selected=["EFFECT-BYTES"]), SUITE, RUN)
    _validate(report)
    assert _row(report, "EFFECT-BYTES")["coverage"] is None
    assert "copies its checks judged" not in markdown.render(report)


@pytest.mark.parametrize(
    ("n", "text"),
    [(1, "1 B"), (496, "496 B"), (4096, "4 KiB"), (65537, "65,537 B"), (1 << 24, "16 MiB")],
)
def test_sizes_are_said_exactly(n: int, text: str) -> None:
    assert size_text(n) == text


def test_shards_merge_their_coverage() -> None:
    """Each shard's results keep each test's tally whole; the merged run's row spans both."""
    one, two = Tally(), Tally()
    one.check_copy(CopyShape("pageable", 100, False, False), "PAGEABLE-BLOCKS")
    two.check_copy(CopyShape("pageable", 1 << 20, False, True), "PAGEABLE-BLOCKS")
    docs = []
    for k, (sid, tally) in enumerate((("t_one", one), ("t_two", two)), start=1):
        doc = _results([_with_coverage(_test(sid, "pass", ["PAGEABLE-BLOCKS"]), tally)])
        doc["shard"] = {"index": k, "count": 2, "digest": "d", "durations": None, "options": {}}
        docs.append((f"shard{k}", json.loads(json.dumps(doc))))
    merged = shards.merge(docs)
    report = reports.build(merged, SUITE, RUN)
    _validate(report)
    c = _row(report, "PAGEABLE-BLOCKS")["coverage"]
    assert c["kinds"]["pageable"] == {
        "copies": 2,
        "smallest": 100,
        "largest": 1 << 20,
        "odd_offset": False,
        "odd_host": True,
    }
    assert c["small_only"] == []


def test_a_kind_small_under_every_requirement_is_said_once() -> None:
    """Registered copies small everywhere: one line under the table, not a note per row;
    a kind small for one requirement but large for another stays on that row."""
    tally = Tally()
    tally.check_copy(CopyShape("registered", 32, False, False), "EFFECT-BYTES", "STREAM-FIFO")
    tally.check_copy(CopyShape("pinned", 1 << 20, False, False), "EFFECT-BYTES")
    tally.check_copy(CopyShape("pinned", 64, False, False), "STREAM-FIFO")
    tests = [_with_coverage(_test("t_a", "pass", ["EFFECT-BYTES", "STREAM-FIFO"]), tally)]
    report = reports.build(_results(tests, selected=["EFFECT-BYTES", "STREAM-FIFO"]), SUITE, RUN)
    _validate(report)
    lines = runner.summary_table(report).splitlines()
    assert "small copies" not in next(x for x in lines if x.startswith("EFFECT-BYTES "))
    fifo = next(x for x in lines if x.startswith("STREAM-FIFO "))
    assert fifo.endswith("small copies only: pinned up to 64 B")
    assert lines[-1] == (
        "small copies only, under every requirement: registered up to 32 B (no check judged "
        "a copy of 64 KiB or more in that memory)"
    )
    # The rows themselves still say it, each.
    assert _row(report, "EFFECT-BYTES")["coverage"]["small_only"] == ["registered"]
