"""The catalogue of variants: name, what it does, what must catch it, where it is legal."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.simulator import Simulator

from . import corner_mutants as c
from . import flaky as f
from . import hang_mutants as h
from . import hunt_mutants as hm
from . import large_failure_mutants as lf
from . import leaky
from . import lifecycle_blind_mutants as lb
from . import lifecycle_registration_mutants as lr
from . import lifecycle_switch_mutants as lc
from . import lifecycle_timeout_mutants as lt
from . import mutants as m
from . import outside_body_mutants as ob
from . import pervasive_mutants as pv
from . import sync_pending_mutants as sp
from . import threshold_mutants as tm

BOTH = ("spec", "cann")


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    build: Callable[..., Adapter]
    catches: dict[str, str]
    """Profile -> the requirement that must catch it there (empty: legal everywhere)."""
    legal: tuple[str, ...] = ()
    """Profiles under which the behaviour is legal (the suite must pass)."""
    breaks: tuple[str, ...] = ()
    """For a combination of bugs, or a bug in a call most tests use: every requirement
    they break (each must fail, and no other requirement may be left failing or
    undecided)."""
    flaky: bool = False
    """A bug that does not show again against a fresh backend: the requirement it breaks
    must be reported ``flaky`` (not ``fail``, not ``pass``)."""
    hangs: str = ""
    """A call that never returns, in C form: the requirement it breaks must be reported
    ``timeout``, and the report must name that call."""
    crashes: str = ""
    """A call that raises instead of answering, in C form: the requirement its success
    stands for must be reported ``crash``, and the report must name that call."""
    oddity_in: tuple[str, ...] = ()
    """For a legal variant whose oddity only the tests of some requirements meet: those
    requirements (the project's tests run only theirs; selfcheck runs the whole suite)."""
    hunt_only: bool = False
    """Found by a bug hunt (``acl-conformance hunt``), not by the ci run: its bug needs a
    rarer input than the gate's budget reaches.  selfcheck does not count it among the
    mutants the ci run must catch (tests/test_hunt.py checks that the ci run misses it,
    and, opt-in, that a hunt finds it)."""

    @property
    def sort(self) -> str:
        """'mutant' (a bug some profile must catch), 'flaky' (a bug that must be reported
        flaky) or 'legal' (behaviour the spec allows)."""
        return ("flaky" if self.flaky else "mutant") if self.catches else "legal"

    def is_mutant(self, profile: str) -> bool:
        return profile in self.catches

    def is_legal(self, profile: str) -> bool:
        return profile in self.legal


def _doc(cls: type) -> str:
    """A variant's description: its class's docstring on one line."""
    return (cls.__doc__ or "").strip().replace("\n", " ")


def _mutant(
    name: str, cls: type[Simulator], requirement: str, profiles: tuple[str, ...] = BOTH
) -> Variant:
    legal = tuple(p for p in BOTH if p not in profiles)
    return Variant(
        name,
        _doc(cls),
        cls,
        dict.fromkeys(profiles, requirement),
        legal,
    )


def _combo(name: str, *parts: str) -> Variant:
    """Several catalogue mutants in one backend (their classes combined: each overrides
    what it changes and hands the rest on)."""
    mutants = [_BY_CLASS_NAME[p] for p in parts]
    cls = type(
        "".join(getattr(m.build, "__name__", "") for m in mutants) or name,
        tuple(m.build for m in mutants),  # type: ignore[misc]
        {"__doc__": " + ".join(m.description for m in mutants), "__module__": m.__name__},
    )
    profiles = tuple(p for p in BOTH if all(m.is_mutant(p) for m in mutants))
    breaks = tuple(m.catches[profiles[0]] for m in mutants)
    return Variant(
        name,
        "; ".join(f"{m.name}: {m.description}" for m in mutants),
        cls,
        dict.fromkeys(profiles, breaks[0]),
        tuple(p for p in BOTH if p not in profiles),
        breaks,
    )


def _no_answer(
    name: str, cls: type[Simulator], requirement: str, *, hangs: str = "", crashes: str = ""
) -> Variant:
    """A mutant with a call that never returns (``hangs``) or raises (``crashes``), charged
    under both profiles to ``requirement``, the one its success stands for."""
    return Variant(
        name, _doc(cls), cls, dict.fromkeys(BOTH, requirement), hangs=hangs, crashes=crashes
    )


def _legal(
    name: str, description: str, profiles: tuple[str, ...] = BOTH, **options: Any
) -> Variant:
    return Variant(name, description, lambda **kw: Simulator(**{**options, **kw}), {}, profiles)


def _still_pinned(name: str, cls: type[Simulator]) -> Variant:
    """A mutant whose memory acts page-locked after aclrtHostUnregister: PINNED-REGISTERED
    where it is a MUST (cann); under spec, where the text does not name aclrtHostRegister,
    the memory is the text's malloc memory, and a copy from it must block
    (PAGEABLE-BLOCKS)."""
    return Variant(name, _doc(cls), cls, {"spec": "PAGEABLE-BLOCKS", "cann": "PINNED-REGISTERED"})


def _oddity(name: str, cls: type[Simulator], *requirements: str) -> Variant:
    """A legal variant (a subclass) whose oddity only the tests of ``requirements`` meet."""
    return Variant(name, _doc(cls), cls, {}, BOTH, oddity_in=requirements)


_SYNC = "PINNED-COMPLETE-AFTER-SYNC"
_PAGEABLE = ("PAGEABLE-BLOCKS", "PAGEABLE-DRAINS-STREAM", "PAGEABLE-SOURCE-REUSE")
_RESET = ("DEVICE-RESET-CONTENTS", "DEVICE-INSTANCE", "DEVICE-CURRENT")

CATALOGUE: tuple[Variant, ...] = (
    _mutant("bound-lt", m.BoundLessThan, "BOUNDS-END-EXACT"),
    _mutant("bound-one-past", m.BoundOnePast, "BOUNDS-PAST-END"),
    _mutant("overflow-wraps", m.OverflowWraps, "BOUNDS-OVERFLOW"),
    _mutant("d2h-accepted", m.DeviceToHostAccepted, "KIND-REJECTED"),
    _mutant("out-of-enum-accepted", m.OutOfEnumAccepted, "KIND-OUT-OF-ENUM"),
    # an independent C library's bug (issue 34): its size_t bound wraps, the synchronous
    # copy writes past the variable (spec missed it: no test made that call)
    _mutant("sync-bound-wraps-past-the-end", m.SyncBoundWrapsPastTheEnd, "TOSYMBOL-SYNC"),
    _mutant("offset-ignored", m.OffsetIgnored, "EFFECT-BYTES"),
    _mutant("one-byte-too-many", m.OneByteTooMany, "EFFECT-NO-STRAY"),
    _mutant("source-off-by-one", m.SourceOffByOne, "EFFECT-BYTES"),
    _mutant("pageable-deferred", m.PageableDeferred, "PAGEABLE-BLOCKS"),
    _mutant("pageable-skips-the-drain", m.PageableSkipsTheDrain, "PAGEABLE-DRAINS-STREAM"),
    _mutant("stream-order-broken", m.StreamOrderBroken, "STREAM-FIFO"),
    _mutant("event-wait-ignored", m.EventWaitIgnored, "STREAM-EVENT-ORDER"),
    _mutant("sync-returns-early", m.SyncReturnsEarly, "PINNED-COMPLETE-AFTER-SYNC"),
    _mutant("shared-instance", m.SharedInstance, "DEVICE-INSTANCE"),
    _mutant("interior-pointer-accepted", m.InteriorPointerAccepted, "SYMBOL-INTERIOR"),
    _mutant("null-stream-rejected", m.NullStreamRejected, "STREAM-NULL-DEFAULT"),
    _mutant("count-zero-rejected", m.CountZeroRejected, "COUNT-ZERO", ("cann",)),
    _mutant("rejected-still-enqueues", m.RejectedStillEnqueues, "HYGIENE-NO-WRITE"),
    _mutant("overflow-invalid-param", m.OverflowIsInvalidParam, "BOUNDS-OVERFLOW", ("cann",)),
    _mutant("destroyed-stream-accepted", m.DestroyedStreamAccepted, "STREAM-INVALID-HANDLE"),
    _mutant("registered-is-pageable", m.RegisteredIsPageable, "PINNED-REGISTERED"),
    _mutant("pinned-blocks", m.PinnedBlocks, "PINNED-ASYNC"),
    _mutant("threads-lose-writes", m.ThreadsLoseWrites, "CONCURRENCY-THREADS"),
    _mutant("foreign-stream-accepted", m.ForeignStreamAccepted, "STREAM-FOREIGN-DEVICE", ("cann",)),
    _mutant("query-always-complete", m.QueryAlwaysComplete, "STREAM-QUERY"),
    _mutant("query-busy-once-used", m.QueryBusyOnceUsed, "STREAM-QUERY"),
    _mutant("dst-max-ignored", m.DstMaxIgnored, "FROMSYMBOL-DSTMAX"),
    _mutant("symbol-not-found-code", m.SymbolNotFoundCode, "SYMBOL-UNREGISTERED", ("cann",)),
    _mutant("size-rounded-up", m.SizeRoundedUp, "SYMBOL-SIZE-AS-DECLARED"),
    # the corners (corner_mutants.py)
    _mutant("count-cut-to-32-bits", c.CountCutTo32Bits, "BOUNDS-PAST-END"),
    _mutant("offset-compared-signed", c.OffsetComparedSigned, "BOUNDS-PAST-END"),
    _mutant("from-ignores-offset", c.FromIgnoresOffset, "FROMSYMBOL-BYTES"),
    Variant(
        "from-ignores-offset-zero-filled",
        _doc(c.FromIgnoresOffset) + "; the variables start zero-filled (as CANN's do)",
        lambda **kw: c.FromIgnoresOffset(**{"zero_filled": True, **kw}),
        dict.fromkeys(BOTH, "FROMSYMBOL-BYTES"),
    ),
    # an independent C library's bug (issue 34): a read that finds at offset 0 what its
    # destination held is the read's fault, not a late one's
    _mutant("from-both-ignore-offset", c.FromBothIgnoreOffset, "FROMSYMBOL-BYTES"),
    _mutant("from-async-reads-at-the-call", c.FromAsyncReadsAtTheCall, "FROMSYMBOL-BYTES"),
    _mutant("large-copy-loses-its-tail", c.LargeCopyLosesItsTail, "EFFECT-BYTES"),
    _mutant(
        "device-sync-default-stream-only",
        c.DeviceSyncWaitsForTheDefaultStream,
        "PINNED-COMPLETE-AFTER-SYNC",
    ),
    _mutant("timeout-zero-waits-forever", c.TimeoutZeroWaitsForever, "SYNC-TIMEOUT", ("cann",)),
    _mutant("event-sync-returns-early", c.EventSyncReturnsEarly, "PINNED-COMPLETE-AFTER-SYNC"),
    _mutant("registered-range-one-past", c.RegisteredRangeOnePast, "PAGEABLE-BLOCKS"),
    _still_pinned("unregister-keeps-the-pages", c.UnregisterKeepsThePages),
    _mutant("rejection-leaves-an-error", c.RejectionLeavesAnError, "SYNC-ERROR-REPORTING"),
    _mutant("rejection-leaves-stream-busy", c.RejectionLeavesTheStreamBusy, "HYGIENE-NO-ENQUEUE"),
    _mutant("deep-queue-drops-tasks", c.DeepQueueDropsTasks, "EFFECT-BYTES"),
    _mutant("symbol-size-in-16-bits", c.SymbolSizeIn16Bits, "SYMBOL-SIZE-AS-DECLARED"),
    _mutant("dst-max-cut-to-32-bits", c.DstMaxCutTo32Bits, "FROMSYMBOL-DSTMAX"),
    _mutant("from-accepts-interior-pointers", c.FromAcceptsInteriorPointers, "FROMSYMBOL-BYTES"),
    _mutant("sync-copy-from-pinned-is-async", c.SyncCopyFromPinnedIsAsync, "TOSYMBOL-SYNC"),
    # a large pageable copy that loses a byte of every page: the bounded-memory path of a
    # failure (large_failure_mutants.py, bench/large_failure.py)
    _mutant("large-pageable-drops-page-tails", lf.LargePageableDropsPageTails, "EFFECT-BYTES"),
    # syncs that return at once when the queue is deep (sync_pending_mutants.py)
    *(
        _mutant(f"sync-early-past-{n}", sp.deeper_than(sp.StreamSyncEarlyWhenDeep, n), _SYNC)
        for n in (2, 8, 32)
    ),
    _mutant("device-sync-early-past-8", sp.deeper_than(sp.DeviceSyncEarlyWhenDeep, 8), _SYNC),
    _mutant("event-sync-early-past-8", sp.deeper_than(sp.EventSyncEarlyWhenDeep, 8), _SYNC),
    _mutant(
        "timeout-sync-early-past-8",
        sp.deeper_than(sp.TimeoutSyncEarlyWhenDeep, 8),
        "SYNC-TIMEOUT",
    ),
    _mutant(
        "destroy-early-past-8",
        sp.deeper_than(sp.DestroyEarlyWhenDeep, 8),
        "STREAM-CALLS",
        ("cann",),
    ),
    # timeouts, the synchronous companions' bounds, the order of checks and the stream
    # life cycle (lifecycle_timeout_mutants.py)
    _mutant("timeout-forever-is-a-poll", lt.TimeoutForeverIsAPoll, "SYNC-TIMEOUT"),
    _mutant("timeout-zero-is-a-poll", lt.TimeoutZeroIsAPoll, "SYNC-TIMEOUT", ("cann",)),
    _mutant("timeout-positive-ignored", lt.TimeoutPositiveIgnored, "SYNC-TIMEOUT"),
    _mutant("from-dst-max-one-short", lt.FromDstMaxOneShortAccepted, "FROMSYMBOL-DSTMAX"),
    _mutant("from-dst-max-equal-rejected", lt.FromDstMaxEqualRejected, "FROMSYMBOL-DSTMAX"),
    _mutant("symbol-before-kind", lt.SymbolLookedUpBeforeKind, "CHECK-ORDER", ("cann",)),
    _mutant("destroy-discards-unstarted", lt.DestroyDiscardsUnstarted, "STREAM-CALLS", ("cann",)),
    # where real runtimes switch copy paths by size (threshold_mutants.py, issue 35)
    _mutant("pageable-staged-in-order", tm.PageableStagedInOrder, "PAGEABLE-BLOCKS"),
    _mutant("pageable-staged-out-of-order", tm.PageableStagedOutOfOrder, "PAGEABLE-BLOCKS"),
    _mutant("pinned-chunks-drop-the-tail", tm.PinnedChunksDropTheTail, "EFFECT-BYTES"),
    _mutant("dma-length-wraps-at-2-24", tm.DmaLengthWraps, "EFFECT-BYTES"),
    # calls that never return (hang_mutants.py): one hang, one failure, the rest decided
    Variant(
        "null-stream-sync-hangs",
        _doc(h.NullStreamSyncHangs),
        h.NullStreamSyncHangs,
        dict.fromkeys(BOTH, _SYNC),
        hangs="aclrtSynchronizeStream(NULL)",
    ),
    Variant(
        "event-sync-hangs",
        _doc(h.EventSyncHangsAfterStreamRecord),
        h.EventSyncHangsAfterStreamRecord,
        dict.fromkeys(BOTH, _SYNC),
        hangs="aclrtSynchronizeEvent",
    ),
    # bugs the suite meets first in a call it makes for itself (outside_body_mutants.py):
    # its clean-up after a test, its reset between harnesses, its set-up reads; each is
    # charged as in a test body
    _no_answer(
        "sync-device-hangs-after-destroy",
        ob.SyncDeviceHangsAfterStreamDestroy,
        _SYNC,
        hangs="aclrtSynchronizeDevice",
    ),
    _no_answer(
        "free-host-crashes-on-large-buffers",
        ob.FreeHostCrashesOnLargeBuffers,
        "HOST-MEMORY-CALLS",
        crashes="aclrtFreeHost",
    ),
    _mutant("destroy-event-refused-after-wait", ob.DestroyEventRefusedAfterWait, "EVENT-CALLS"),
    _no_answer(
        "sync-copy-hangs-with-no-stream",
        ob.SyncCopyHangsWithNoStream,
        "TOSYMBOL-SYNC",
        hangs="aclrtMemcpyToSymbol",
    ),
    _no_answer(
        "sync-copy-crashes-with-no-stream",
        ob.SyncCopyCrashesWithNoStream,
        "TOSYMBOL-SYNC",
        crashes="aclrtMemcpyToSymbol",
    ),
    _no_answer(
        "large-read-hangs", ob.LargeReadHangs, "FROMSYMBOL-BYTES", hangs="aclrtMemcpyFromSymbol"
    ),
    # a bug in a call most tests use (pervasive_mutants.py): every other requirement is
    # still decided, and only the default stream's fails
    Variant(
        "null-stream-rejected-everywhere",
        _doc(pv.NullStreamRejectedEverywhere),
        pv.NullStreamRejectedEverywhere,
        dict.fromkeys(BOTH, "STREAM-NULL-DEFAULT"),
        breaks=("STREAM-NULL-DEFAULT",),
    ),
    Variant(
        "every-kth-copy-loses-a-byte",
        _doc(f.EveryKthCopyLosesItsLastByte),
        f.EveryKthCopyLosesItsLastByte,
        dict.fromkeys(BOTH, "EFFECT-BYTES"),
        flaky=True,
    ),
    # bugs the ci run misses and a bug hunt finds (hunt_mutants.py)
    Variant(
        "registered-copy-behind-two-loses-last-byte",
        _doc(hm.RegisteredCopyBehindTwoLosesItsLastByte),
        hm.RegisteredCopyBehindTwoLosesItsLastByte,
        dict.fromkeys(BOTH, "EFFECT-BYTES"),
        hunt_only=True,
    ),
    Variant(
        "registered-default-odd-copy-loses-last-byte",
        _doc(hm.RegisteredDefaultOddCopyLosesItsLastByte),
        hm.RegisteredDefaultOddCopyLosesItsLastByte,
        dict.fromkeys(BOTH, "EFFECT-BYTES"),
        hunt_only=True,
    ),
    # was hunt-only; the ci run catches it since the event life cycles (issue 23)
    _mutant("sync-early-after-wait-when-deep", hm.StreamSyncEarlyAfterWaitWhenDeep, _SYNC),
    # life cycles past their first step (lifecycle_switch_mutants.py, issue 23)
    _mutant("current-device-process-global", lc.CurrentDeviceProcessGlobal, "DEVICE-CURRENT"),
    _mutant("null-stream-stale-after-switch", lc.NullStreamStaleAfterSwitch, "STREAM-NULL-DEFAULT"),
    _mutant("wait-binds-first-record", lc.WaitBindsFirstRecord, "STREAM-EVENT-ORDER"),
    _mutant("pending-wait-retargeted", lc.PendingWaitRetargeted, "STREAM-EVENT-ORDER"),
    # under spec the text leaves a destroy with tasks pending open (STREAM-CALLS, silent):
    # its tasks and the events recorded among them may complete later or never; under
    # cann the destroy must wait, and not waiting is caught first
    _mutant(
        "destroy-completes-its-events", lc.DestroyCompletesItsEvents, "STREAM-CALLS", ("cann",)
    ),
    # second and third steps of life cycles: several registrations, a device reset
    # (lifecycle_registration_mutants.py)
    _still_pinned("unregister-drops-the-most-recent", lr.UnregisterDropsTheMostRecent),
    _mutant("unregister-drops-every-range", lr.UnregisterDropsEveryRange, "PINNED-REGISTERED"),
    _mutant("registration-keeps-one-range", lr.RegistrationKeepsOneRange, "PINNED-REGISTERED"),
    _mutant("re-registered-stays-pageable", lr.ReRegisteredStaysPageable, "PINNED-REGISTERED"),
    _mutant("reset-clears-every-device", lr.ResetClearsEveryDevice, "DEVICE-INSTANCE"),
    _mutant("reset-clears-the-current-device", lr.ResetClearsTheCurrentDevice, "DEVICE-INSTANCE"),
    _mutant("reset-aliases-device-0", lr.ResetAliasesDeviceZero, "DEVICE-INSTANCE"),
    # written blind for issue 23, past the first step of a life cycle (lifecycle_blind_mutants.py)
    _still_pinned("unregister-leaves-a-stale-cache", lb.UnregisterLeavesAStaleCache),
    _mutant(
        "re-register-after-unregister-refused",
        lb.ReRegisterAfterUnregisterRefused,
        "HOST-MEMORY-CALLS",
    ),
    _mutant("reset-drops-the-current-device", lb.ResetDropsTheCurrentDevice, "DEVICE-CURRENT"),
    _mutant(
        "event-record-revalidates-its-stream", lb.EventRecordRevalidatesItsStream, "EVENT-CALLS"
    ),
    _mutant("get-device-reports-the-first-set", lb.GetDeviceReportsTheFirstSet, "DEVICE-CALLS"),
    _mutant("from-dst-max-zero-unbounded", lb.FromDstMaxZeroIsUnbounded, "FROMSYMBOL-DSTMAX"),
    _mutant("from-dst-max-counts-the-offset", lb.FromDstMaxCountsTheOffset, "FROMSYMBOL-DSTMAX"),
    _mutant("stream-checked-first", lb.StreamCheckedFirst, "CHECK-ORDER", ("cann",)),
    _oddity("pageable-returns-late", lb.PageableReturnsLate, *_PAGEABLE),
    _oddity("timeout-expires-late", lb.TimeoutExpiresLate, "SYNC-TIMEOUT"),
    _oddity("reset-poisons-contents", lb.ResetPoisonsContents, *_RESET),
    _oddity("reset-keeps-contents", lb.ResetKeepsContents, *_RESET),
    _legal("eager", "tasks run as soon as they can (the default)", schedule="eager"),
    _legal("lazy", "tasks run only when something waits for them", schedule="lazy"),
    _legal(
        "random-1",
        "seeded random delays and interleavings between streams",
        schedule="random",
        seed=1,
    ),
    _legal("random-2", "another seed of random scheduling", schedule="random", seed=2),
    _legal(
        "pinned-read-at-call", "a page-locked copy reads its source at the call", pinned_read="call"
    ),
    _legal("one-device", "a single device (two-device tests are not supported)", devices=1),
    _legal(
        "host-reuse",
        "host allocations reuse freed addresses (as malloc and pinned pools do), and a "
        "registration never undone outlives the free and applies to what is allocated there next",
        host_reuse=True,
    ),
    _legal(
        "pageable-waits-device",
        "a pageable copy waits for every stream of its device before copying (slower than it "
        "must be: the text only says it returns once the copy is complete)",
        pageable_waits="device",
    ),
    _legal(
        "device-like",
        "behaves like a real asynchronous device: creating a context takes 200 ms, aclrtFreeHost "
        "and aclrtHostUnregister wait until every stream of every device is idle, the host "
        "functions of one device run one at a time (a closed gate holds the gates of its "
        "device's other streams), a pageable copy takes its source at the call",
        device_like=True,
    ),
    _legal(
        "no-default-stream",
        "no default stream: the capability is declared off and NULL is rejected wherever a "
        "stream goes (its requirements are not supported)",
        default_stream=False,
    ),
    Variant(
        "stream-table-fills",
        _doc(leaky.StreamTableFills)
        + "; it asks for isolation reset: the suite must recover with fresh instances",
        leaky.StreamTableFills,
        {},
        BOTH,
    ),
    Variant(
        "generic-error-codes",
        _doc(m.GenericErrorCodes),
        m.GenericErrorCodes,
        {},
        ("spec",),
    ),
)

_BY_CLASS_NAME = {v.name: v for v in CATALOGUE}

COMBINATIONS: tuple[Variant, ...] = (
    _combo("three-bugs", "d2h-accepted", "interior-pointer-accepted", "query-always-complete"),
    _combo("three-bugs-timing", "bound-lt", "pageable-deferred", "event-wait-ignored"),
)
"""Backends with several bugs in different areas: each bug must be found and charged to
its own requirement, and every other requirement still decided (see issue 10)."""

CATALOGUE = CATALOGUE + COMBINATIONS

BY_NAME: dict[str, Variant] = {v.name: v for v in CATALOGUE}


def variant(name: str, **options: Any) -> Adapter:
    """The adapter for variant ``name`` (``--acl-adapter acl_conformance.adapters.variants:variant
    --acl-adapter-option name=<name>``); other options go to the simulator."""
    try:
        v = BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown variant {name!r}; known: {', '.join(BY_NAME)}") from None
    return v.build(**options)
