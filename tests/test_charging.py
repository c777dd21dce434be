"""The decision table of ``reference_impl/charging.py``: each rule gives the requirement a
failure is charged to and its other readings from the facts a path established, and no
other module of the shipped packages decides a charge.

The rules are tried on facts written here (an allowed answer of a made-up call, a story's
labels), not on the model's output: each case names the requirement the design's list of
re-charges (docs/design.md, "The judgement, and how a failure is charged") says it gets.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from acl_conformance.reference_impl import charging
from acl_conformance.reference_impl.charging import Charge
from acl_conformance.reference_impl.charging import Cited
from acl_conformance.reference_impl.charging import Overwritten
from acl_conformance.reference_impl.charging import WrongCode
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_CONTEXT_NULL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_CONTEXT
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.outcome import AllowedAnswers
from acl_conformance.reference_impl.outcome import Alternative
from acl_conformance.reference_impl.outcome import Codes

ROOT = Path(__file__).resolve().parent.parent

OTHER_CODE = 507000
"""A code no rule gives a meaning to (a refusal is judged against the primary answer)."""


def _answers(
    requirement: str | None = "KIND-ACCEPTED",
    *,
    codes: Codes | None = None,
    also: tuple[str, ...] = (),
    shadow: tuple[str, ...] = (),
    order_codes: frozenset[int] = frozenset(),
    more: tuple[Alternative, ...] = (),
) -> AllowedAnswers:
    codes = codes or Codes.only(ACL_SUCCESS)
    primary = Alternative(codes, None, requirement, "why", also, shadow, order_codes)
    return AllowedAnswers((primary, *more))


# -- a wrong return code ---------------------------------------------------------


def test_a_refusal_is_charged_to_the_primary_answer_with_its_readings_and_shadow() -> None:
    answers = _answers(also=("STREAM-NULL-DEFAULT",), shadow=("COPY-BOUNDS",))
    c = charging.wrong_code(WrongCode("memcpy_to_symbol_async", OTHER_CODE, answers))
    assert (c.requirement, c.also) == ("KIND-ACCEPTED", ("STREAM-NULL-DEFAULT", "COPY-BOUNDS"))
    # A success where a rejection was due is not a rejection with another code: the
    # checks it passed are no reading of it.
    c = charging.wrong_code(WrongCode("memcpy_to_symbol_async", ACL_SUCCESS, answers))
    assert (c.requirement, c.also) == ("KIND-ACCEPTED", ("STREAM-NULL-DEFAULT",))


def test_a_later_checks_code_is_charged_to_check_order_with_the_primary_as_a_reading() -> None:
    answers = _answers(
        "COPY-BOUNDS",
        codes=Codes.only(ACL_ERROR_INVALID_PARAM),
        also=("CHECK-ORDER", "STREAM-NULL-DEFAULT"),
        order_codes=frozenset({OTHER_CODE}),
    )
    c = charging.wrong_code(WrongCode("memcpy_to_symbol_async", OTHER_CODE, answers))
    assert (c.requirement, c.also) == ("CHECK-ORDER", ("COPY-BOUNDS", "STREAM-NULL-DEFAULT"))
    # A code that is not a later check's: the primary stands.
    c = charging.wrong_code(WrongCode("memcpy_to_symbol_async", OTHER_CODE + 1, answers))
    assert c.requirement == "COPY-BOUNDS"


def test_dst_max_code_where_dst_max_holds_count_is_the_dst_max_rule() -> None:
    answers = _answers("FROMSYMBOL-BYTES")
    f = WrongCode("memcpy_from_symbol", ACL_ERROR_INVALID_PARAM, answers, dst_max_holds_count=True)
    c = charging.wrong_code(f)
    assert (c.requirement, c.also) == ("FROMSYMBOL-DSTMAX", ("FROMSYMBOL-BYTES",))
    other = WrongCode("memcpy_from_symbol", OTHER_CODE, answers, dst_max_holds_count=True)
    assert charging.wrong_code(other).requirement == "FROMSYMBOL-BYTES"


def test_an_error_from_a_synchronisation_that_had_to_succeed_is_sync_error_reporting() -> None:
    answers = _answers("PINNED-COMPLETE-AFTER-SYNC")
    c = charging.wrong_code(WrongCode("synchronize_device", OTHER_CODE, answers))
    assert (c.requirement, c.also) == ("SYNC-ERROR-REPORTING", ("PINNED-COMPLETE-AFTER-SYNC",))
    # A time-out of a synchronisation with a time-out is the time-out's matter.
    timed = WrongCode(
        "synchronize_stream_with_timeout",
        ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
        _answers("SYNC-TIMEOUT"),
    )
    assert charging.wrong_code(timed).requirement == "SYNC-TIMEOUT"
    # Where a refusal was allowed too, the error is no error without a failure.
    either = _answers(
        "PINNED-COMPLETE-AFTER-SYNC",
        more=(Alternative(Codes.only(OTHER_CODE + 1), None, "STREAM-CALLS", "why"),),
    )
    assert (
        charging.wrong_code(WrongCode("synchronize_device", OTHER_CODE, either)).requirement
        == "PINNED-COMPLETE-AFTER-SYNC"
    )


def test_an_event_call_refused_on_valid_arguments_is_event_calls() -> None:
    answers = _answers("STREAM-EVENT-ORDER")
    c = charging.wrong_code(WrongCode("record_event", OTHER_CODE, answers))
    assert (c.requirement, c.also) == ("EVENT-CALLS", ("STREAM-EVENT-ORDER",))
    c = charging.wrong_code(WrongCode("synchronize_event", OTHER_CODE, answers))
    assert (c.requirement, c.also) == (
        "EVENT-CALLS",
        ("STREAM-EVENT-ORDER", "SYNC-ERROR-REPORTING"),
    )


def test_another_context_for_null_is_stream_null_default_only_on_null() -> None:
    answers = _answers("PINNED-COMPLETE-AFTER-SYNC", also=("STREAM-NULL-DEFAULT",))
    on_null = WrongCode(
        "synchronize_stream", ACL_ERROR_RT_STREAM_CONTEXT, answers, null_stream=True
    )
    c = charging.wrong_code(on_null)
    assert c.requirement == "STREAM-NULL-DEFAULT"
    assert "STREAM-NULL-DEFAULT" not in c.also and "SYNC-ERROR-REPORTING" in c.also
    named = WrongCode("synchronize_stream", ACL_ERROR_RT_STREAM_CONTEXT, answers)
    assert charging.wrong_code(named).requirement == "SYNC-ERROR-REPORTING"


def test_no_current_context_on_a_thread_with_a_device_is_device_current() -> None:
    answers = _answers("KIND-ACCEPTED")
    lost = WrongCode(
        "memcpy_to_symbol_async", ACL_ERROR_RT_CONTEXT_NULL, answers, thread_has_device=True
    )
    c = charging.wrong_code(lost)
    assert (c.requirement, c.also) == ("DEVICE-CURRENT", ("KIND-ACCEPTED",))
    reset = WrongCode("reset_device", ACL_ERROR_RT_CONTEXT_NULL, answers, thread_has_device=True)
    assert charging.wrong_code(reset).requirement == "KIND-ACCEPTED"
    none = WrongCode("memcpy_to_symbol_async", ACL_ERROR_RT_CONTEXT_NULL, answers)
    assert charging.wrong_code(none).requirement == "KIND-ACCEPTED"


# -- wrong bytes -------------------------------------------------------------------


def test_a_copy_past_a_gate_breaks_the_order_that_held_it() -> None:
    assert charging.ran_past_gate(through_event=True).requirement == "STREAM-EVENT-ORDER"
    assert charging.ran_past_gate(through_event=False).requirement == "STREAM-FIFO"


def test_a_copys_own_promise_is_the_recorded_one_else_its_modes() -> None:
    assert charging.own_promise("pageable") == "PAGEABLE-BLOCKS"
    assert charging.own_promise("sync") == "TOSYMBOL-SYNC"
    assert charging.own_promise("pinned") is None
    assert charging.own_promise("pageable", "PINNED-REGISTERED") == "PINNED-REGISTERED"
    c = charging.other_instance("#3 aclrtMemcpyToSymbol(...)", "sync")
    assert (c.requirement, c.also) == ("DEVICE-INSTANCE", ("TOSYMBOL-SYNC",))
    assert "#3 aclrtMemcpyToSymbol" in c.why


def test_an_overwritten_copy_on_top_is_charged_to_the_broken_order_or_promise() -> None:
    alone = charging.overwritten(Overwritten("#2 old", "PAGEABLE-BLOCKS"))
    assert (alone.requirement, alone.also) == ("STREAM-FIFO", ("PAGEABLE-BLOCKS",))
    facts = Overwritten(
        "#2 old",
        None,
        hider="#4 new",
        hider_promise="PINNED-COMPLETE-AFTER-SYNC",
        hider_own=None,
        promise="STREAM-QUERY",
        same_stream=True,
    )
    assert charging.overwritten(facts).requirement == "STREAM-FIFO"
    across = charging.overwritten(Overwritten(**{**facts.__dict__, "same_stream": False}))
    assert across.requirement == "STREAM-EVENT-ORDER"
    assert across.also == ("PINNED-COMPLETE-AFTER-SYNC",)
    known = charging.overwritten(Overwritten(**{**facts.__dict__, "known_before_hider": True}))
    # Known complete before the hider was issued: the promise that said so, the order and
    # the hider's promise other readings.
    assert known.requirement == "STREAM-QUERY"
    assert known.also == ("PINNED-COMPLETE-AFTER-SYNC", "STREAM-FIFO")
    assert charging.order_may_be_lost_copy(across) and not charging.order_may_be_lost_copy(known)
    # A promise both the charge and a reading is named once, as the charge.
    same = Overwritten(**{**facts.__dict__, "known_before_hider": True, "promise": None})
    assert charging.overwritten(same).also == ("STREAM-FIFO",)


def test_a_copy_known_complete_that_did_not_land_is_charged_to_the_promise() -> None:
    c = charging.known_complete_missing("#2 copy", "STREAM-QUERY", "#3 query", "TOSYMBOL-SYNC")
    assert (c.requirement, c.also) == ("STREAM-QUERY", ("TOSYMBOL-SYNC",))
    assert "#3 query returned" in c.why
    default = charging.known_complete_missing("#2 copy", None, None, None)
    assert (default.requirement, default.also) == ("PINNED-COMPLETE-AFTER-SYNC", ())
    own = charging.known_complete_missing("#2 copy", "PAGEABLE-BLOCKS", None, "PAGEABLE-BLOCKS")
    assert own.also == ()
    assert charging.ran_late("#2 copy", None, None).requirement == "PINNED-COMPLETE-AFTER-SYNC"


def test_the_other_stories_of_wrong_bytes() -> None:
    reused = charging.pageable_source_reused()
    assert (reused.requirement, reused.also) == ("PAGEABLE-SOURCE-REUSE", ("PAGEABLE-BLOCKS",))
    assert charging.rejected_wrote("#5 x").requirement == "HYGIENE-NO-WRITE"
    assert charging.reset_elsewhere("#6 r").requirement == "DEVICE-INSTANCE"
    assert charging.stray(variable_copied=True, others_copied=True).requirement == (
        "EFFECT-NO-STRAY"
    )
    assert charging.stray(variable_copied=False, others_copied=False).requirement == (
        "EFFECT-NO-STRAY"
    )
    assert charging.stray(variable_copied=False, others_copied=True).requirement == (
        "EFFECT-NEIGHBOURS"
    )
    assert charging.unexplained_bytes().requirement == "EFFECT-BYTES"


# -- the handlers' wrong answers ---------------------------------------------------------


DRAINS, BLOCKS, REGISTERED = "PAGEABLE-DRAINS-STREAM", "PAGEABLE-BLOCKS", "PINNED-REGISTERED"


@pytest.mark.parametrize(
    ("profile", "registered", "likelier", "expected", "promise"),
    [
        ("cann", False, frozenset(), (DRAINS, (BLOCKS,)), BLOCKS),
        # Registered once: PINNED-REGISTERED is a MUST under cann, only a SHOULD under spec.
        ("cann", True, frozenset(), (REGISTERED, (DRAINS, BLOCKS)), REGISTERED),
        ("spec", True, frozenset(), (DRAINS, (BLOCKS, REGISTERED)), BLOCKS),
        # The pageable requirement known to fail anyway: it stays the charge.
        ("cann", True, frozenset({DRAINS}), (DRAINS, (BLOCKS, REGISTERED)), REGISTERED),
        ("cann", True, frozenset({BLOCKS}), (REGISTERED, (DRAINS, BLOCKS)), BLOCKS),
    ],
)
def test_a_pageable_copy_that_did_not_block(
    profile: str,
    registered: bool,
    likelier: frozenset[str],
    expected: tuple[str, tuple[str, ...]],
    promise: str,
) -> None:
    c = charging.pageable_not_blocking(profile, registered, likelier, DRAINS, BLOCKS)
    assert (c.requirement, c.also) == expected
    # The promise of completion at its return that a copy found missing later is charged to.
    assert charging.pageable_promise(profile, registered, likelier) == promise


def test_a_refusal_on_null_names_the_default_stream() -> None:
    c = charging.refused_on_null(Charge("PINNED-COMPLETE-AFTER-SYNC", ("SYNC-TIMEOUT",)))
    assert (c.requirement, c.also) == (
        "PINNED-COMPLETE-AFTER-SYNC",
        ("SYNC-TIMEOUT", "STREAM-NULL-DEFAULT"),
    )
    c = charging.refused_on_null(Charge(None))
    assert (c.requirement, c.also) == ("STREAM-NULL-DEFAULT", ())


def test_a_busy_stream_is_charged_to_what_left_it_busy_first_then_the_query() -> None:
    c = charging.busy_stream(False, False, [])
    assert (c.requirement, c.also) == ("STREAM-QUERY", ())
    c = charging.busy_stream(False, True, ["PAGEABLE-DRAINS-STREAM"])
    assert (c.requirement, c.also) == ("TOSYMBOL-SYNC", ("PAGEABLE-DRAINS-STREAM", "STREAM-QUERY"))
    c = charging.busy_stream(True, True, [])
    assert c.requirement == "HYGIENE-NO-ENQUEUE"


def test_a_synchronisations_promise() -> None:
    assert charging.sync_promise("synchronize_stream_with_timeout") == "SYNC-TIMEOUT"
    assert charging.sync_promise("synchronize_stream") == "PINNED-COMPLETE-AFTER-SYNC"


def test_a_misreported_device_and_an_unwritten_read() -> None:
    assert charging.reported_device(True).requirement == "DEVICE-CURRENT"
    assert charging.reported_device(False).requirement == "DEVICE-CALLS"
    c = charging.unwritten_read(None)
    assert (c.requirement, c.also) == ("PINNED-COMPLETE-AFTER-SYNC", ("FROMSYMBOL-BYTES",))
    assert charging.unwritten_read("SYNC-TIMEOUT").requirement == "SYNC-TIMEOUT"


# -- after a second look -------------------------------------------------------------

DRAIN = Charge("PAGEABLE-DRAINS-STREAM", ("PAGEABLE-BLOCKS",))


def test_a_second_look_at_a_pageable_copy_behind_a_closed_gate() -> None:
    assert charging.drained_or_not(DRAIN, bytes_there=True).requirement == "PAGEABLE-DRAINS-STREAM"
    c = charging.drained_or_not(DRAIN, bytes_there=False)
    assert (c.requirement, c.also) == ("PAGEABLE-BLOCKS", ("PAGEABLE-DRAINS-STREAM",))
    registered = Charge("PINNED-REGISTERED", ("PAGEABLE-DRAINS-STREAM",))
    assert charging.drained_or_not(registered, bytes_there=False) == Charge(
        "PINNED-REGISTERED",
        ("PAGEABLE-DRAINS-STREAM",),
        charging.drained_or_not(DRAIN, bytes_there=False).why,
    )


def test_a_second_look_at_a_busy_stream_and_an_unwritten_read() -> None:
    promise = Charge("PINNED-COMPLETE-AFTER-SYNC", ("STREAM-QUERY",))
    assert charging.busy_or_lying(promise, complete_now=True).requirement == (
        "PINNED-COMPLETE-AFTER-SYNC"
    )
    c = charging.busy_or_lying(promise, complete_now=False)
    assert (c.requirement, c.also) == ("STREAM-QUERY", ("PINNED-COMPLETE-AFTER-SYNC",))
    read = Charge("PINNED-COMPLETE-AFTER-SYNC", ("FROMSYMBOL-BYTES",))
    assert charging.read_late_or_wrong(read, destination_changed=True).requirement == (
        "PINNED-COMPLETE-AFTER-SYNC"
    )
    c = charging.read_late_or_wrong(read, destination_changed=False)
    assert (c.requirement, c.also) == ("FROMSYMBOL-BYTES", ("PINNED-COMPLETE-AFTER-SYNC",))


def test_a_second_look_at_missing_bytes() -> None:
    promise = Charge("STREAM-QUERY", ("STREAM-FIFO",))
    late = charging.late_or_lost(promise, "PAGEABLE-BLOCKS", True, False, 0, 4)
    # The copy's own call promised completion at its return: that promise is the charge.
    assert (late.requirement, late.also) == ("PAGEABLE-BLOCKS", ("STREAM-QUERY", "STREAM-FIFO"))
    assert charging.late_or_lost(promise, None, True, False, 0, 4).requirement == "STREAM-QUERY"
    both = charging.late_or_lost(promise, None, False, True, 0, 4)
    assert (both.requirement, both.also) == ("STREAM-QUERY", ("STREAM-FIFO", "EFFECT-BYTES"))
    lost = charging.late_or_lost(promise, None, False, False, 0, 4)
    assert (lost.requirement, lost.also) == ("EFFECT-BYTES", ("STREAM-QUERY", "STREAM-FIFO"))
    assert "[0, 4)" in lost.why


def test_a_second_look_at_a_read() -> None:
    bytes_wrong = Charge("EFFECT-BYTES", ("STREAM-FIFO",))
    racing = charging.racing_read(bytes_wrong)
    assert (racing.requirement, racing.also) == (
        "EFFECT-BYTES",
        ("STREAM-FIFO", "FROMSYMBOL-BYTES"),
    )
    lies = charging.the_read_lies(bytes_wrong)
    assert (lies.requirement, lies.also) == ("FROMSYMBOL-BYTES", ("EFFECT-BYTES", "STREAM-FIFO"))


# -- no answer; a context; the run ----------------------------------------------------


def test_a_call_that_never_answered_is_charged_to_what_its_success_stands_for() -> None:
    refused = Alternative(Codes.only(ACL_ERROR_INVALID_PARAM), None, "COPY-BOUNDS", "why")
    accepted = Alternative(Codes.only(ACL_SUCCESS), None, "KIND-ACCEPTED", "why")
    assert charging.no_answer(AllowedAnswers((refused, accepted))).requirement == "KIND-ACCEPTED"
    assert charging.no_answer(AllowedAnswers((refused,))).requirement == "COPY-BOUNDS"
    assert charging.no_answer(None).requirement is None


def test_a_failure_in_a_context_is_charged_to_the_contexts_requirement() -> None:
    c = charging.in_context(
        Charge("EFFECT-BYTES", ("STREAM-FIFO",)), "CONCURRENCY-THREADS", "with 4 host threads"
    )
    assert (c.requirement, c.also) == ("CONCURRENCY-THREADS", ("EFFECT-BYTES", "STREAM-FIFO"))


def test_the_run_recharges_only_when_the_cited_requirement_did_not_fail_clearly() -> None:
    drain = Cited("PAGEABLE-DRAINS-STREAM", ("PAGEABLE-BLOCKS",))
    blocks = Cited("PAGEABLE-BLOCKS")
    # PAGEABLE-BLOCKS failed clearly elsewhere; the drain's own failure names it: charged there.
    assert charging.in_the_run([drain, blocks]) == ["PAGEABLE-BLOCKS", "PAGEABLE-BLOCKS"]
    # Nothing else failed: the drain is clear, and stays.
    assert charging.in_the_run([drain]) == ["PAGEABLE-DRAINS-STREAM"]
    # The drain failed clearly too (a failure of it that names nothing else): it stays.
    clear = Cited("PAGEABLE-DRAINS-STREAM")
    assert charging.in_the_run([drain, blocks, clear])[0] == "PAGEABLE-DRAINS-STREAM"
    # An expected failure (not real) makes nothing clear.
    expected = Cited("PAGEABLE-BLOCKS", real=False)
    assert charging.in_the_run([drain, expected]) == ["PAGEABLE-DRAINS-STREAM", "PAGEABLE-BLOCKS"]


# -- no other module decides ---------------------------------------------------------

SHIPPED = ("reference_impl", "conformance", "reports", "adapters", "acl_conformance")
CHARGING = ROOT / "reference_impl" / "charging.py"


CHECKED = {
    "Violation": ("requirement", "message"),
    "Charge": ("requirement", "also"),
    "charge_to": ("requirement",),
    "charge": ("requirement",),
    "replace": (),
}
"""The calls that give a failure its requirement and other readings, with their
positional parameters: a violation made, a charge made, a hang or crash charged, a
violation re-charged (``dataclasses.replace``)."""


def _name(call: ast.Call) -> str:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return call.func.id if isinstance(call.func, ast.Name) else ""


def _fields(call: ast.Call) -> list[tuple[str, ast.expr]]:
    """The requirement and other readings one of the ``CHECKED`` calls is given."""
    positional = CHECKED[_name(call)]
    out = [(k, v) for k, v in zip(positional, call.args, strict=False) if k != "message"]
    return out + [(k.arg, k.value) for k in call.keywords if k.arg in ("requirement", "also")]


def _decided_here(value: ast.expr, field: str, params: set[str], fixed: bool) -> bool:
    """Is this value a choice made in place?  Not when it is a charge's
    (``x.requirement``, ``x.also``), what the enclosing function's caller passed, None, or,
    where ``fixed`` (a violation or a charge made, not a re-charge), a constant of
    requirement_ids: the one requirement of the check that made it."""
    if isinstance(value, ast.Attribute) and value.attr == field:
        return False
    if isinstance(value, ast.Name) and (value.id in params or (fixed and value.id.isupper())):
        return False
    return not (isinstance(value, ast.Constant) and value.value is None)


def _decisions(path: Path, root: Path = ROOT) -> list[str]:
    """Each place in ``path`` where a requirement or other readings are picked in place."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[str] = []

    def walk(node: ast.AST, params: set[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            params = params | {a.arg for a in (*node.args.args, *node.args.kwonlyargs)}
        if isinstance(node, ast.Call) and _name(node) in CHECKED:
            name = _name(node)
            for field, value in _fields(node):
                if _decided_here(value, field, params, name in ("Violation", "Charge")):
                    found.append(f"{path.relative_to(root)}:{node.lineno} {name}({field}=...)")
        for child in ast.iter_child_nodes(node):
            walk(child, params)

    walk(tree, set())
    return found


def test_no_module_but_charging_decides_a_charge() -> None:
    """A violation outside the charging module is given a fixed requirement (the one check
    it is), a charge's requirement and readings, or what its caller passed: never one
    picked in place (a conditional, a variable set in branches, a list of causes)."""
    files = [
        p
        for top in SHIPPED
        for p in sorted((ROOT / top).rglob("*.py"))
        if p != CHARGING and ".venv" not in p.parts
    ]
    assert len(files) > 50
    found = [d for p in files for d in _decisions(p)]
    assert not found, "a charge decided outside reference_impl/charging.py:\n" + "\n".join(found)


def test_the_check_finds_a_charge_picked_in_place(tmp_path: Path) -> None:
    """The check itself: a requirement chosen by a condition, other readings written in
    place and a re-charge to a fixed requirement are found; a fixed requirement of a
    violation made, and a charge's, are not."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f(v, ok, charge):\n"
        "    req = 'A' if ok else 'B'\n"
        "    Violation(req, 'm')\n"
        "    Violation(A_CONSTANT, 'm', also=('B',))\n"
        "    dataclasses.replace(v, requirement=STREAM_QUERY)\n"
        "    dataclasses.replace(v, requirement=charge.requirement, also=charge.also)\n"
        "    Violation(A_CONSTANT, 'm')\n"
        "    Violation(charge.requirement, 'm', also=charge.also)\n"
    )
    found = _decisions(bad, tmp_path)
    assert [f.split()[0] for f in found] == ["bad.py:3", "bad.py:4", "bad.py:5"]
