"""The requirement catalogue: each clause of the specification as data.

A requirement has a stable ID (used by test markers, reports and failure
messages), the area of the spec it belongs to, the sentence(s) of the spec
text it comes from (verbatim), a level per profile it applies to, and for the
``cann`` profile the facts of the open-source runtime it rests on.  Where the
text is silent the requirement says so, and says what the suite accepts.
Each point the facts file lists as ambiguous is tied to a requirement.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from .spec_text import NORMATIVE_SENTENCES
from .spec_text import PRODUCT_TABLE_HEADING
from .spec_text import PROTOTYPE


class Level(str, Enum):
    """How strongly a requirement binds (RFC 2119 words)."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


PROFILES = ("spec", "cann")
"""``spec``: what the text says.  ``cann``: what the open-source CANN runtime does."""


@dataclass(frozen=True)
class Requirement:
    """One checkable statement of the specification."""

    id: str
    clause: str
    """The area of the spec it belongs to (``kinds``, ``bounds``, ... ``companion``): a
    test module per area."""
    title: str
    quote: tuple[str, ...]
    levels: Mapping[str, Level]
    cann: str | None = None
    """What the ``cann`` profile demands beyond the text (exact codes, order)."""
    facts: tuple[str, ...] = ()
    """Citations into cann-runtime-facts.md that the ``cann`` behaviour rests on."""
    silent: str | None = None
    """Where the text says nothing: what is open, and what the suite accepts."""
    ambiguity: tuple[int, ...] = ()
    """Numbers of the facts file's "Ambiguities the doc leaves open" this settles."""
    reason: str | None = None
    """Why the requirement has the level it has, where that is not plain."""

    @property
    def profiles(self) -> frozenset[str]:
        return frozenset(self.levels)

    def level(self, profile: str) -> Level | None:
        """The level in ``profile``, or None if the requirement does not apply there."""
        return self.levels.get(profile)

    def applies_to(self, profile: str) -> bool:
        return profile in self.levels


def _levels(spec: Level | None, cann: Level | None) -> Mapping[str, Level]:
    out: dict[str, Level] = {}
    if spec is not None:
        out["spec"] = spec
    if cann is not None:
        out["cann"] = cann
    return MappingProxyType(out)


MUST, SHOULD, MAY = Level.MUST, Level.SHOULD, Level.MAY

# Short names for the spec sentences quoted below; each is checked to be a
# verbatim sentence of the spec text.
_S = {i: s for i, s in enumerate(NORMATIVE_SENTENCES)}
FUNCTION = _S[0]
WRITES_VARIABLE = _S[1]
HOST_MEMORY = _S[2]
PINNED_ASYNC = _S[3]
DELIVERED = _S[4]
SYNC_TO_COMPLETE = _S[5]
PAGEABLE_RETURNS = _S[6]
SIGNATURE = PROTOTYPE
SYMBOL_ADDR = _S[8]
GM = _S[9]
SRC_PTR = _S[10]
COUNT_BYTES = _S[11]
BOUND = _S[12]
SIZE_FROM_GETSYMBOLSIZE = _S[13]
OFFSET_BYTES = _S[14]
KIND_IS = _S[15]
KIND_TYPE = _S[16]
KINDS_SUPPORTED = _S[17]
STREAM_FOR = _S[18]
STREAM_TYPE = _S[19]
RETURNS = _S[20]
RETURNS_ACLERROR = _S[21]
RESTRICTIONS = _S[22]

_R: list[Requirement] = []


def _req(
    id: str,
    clause: str,
    title: str,
    quote: Iterable[str],
    spec: Level | None,
    cann: Level | None,
    *,
    cann_text: str | None = None,
    facts: tuple[str, ...] = (),
    silent: str | None = None,
    ambiguity: tuple[int, ...] = (),
    reason: str | None = None,
) -> None:
    _R.append(
        Requirement(
            id=id,
            clause=clause,
            title=title,
            quote=tuple(quote),
            levels=_levels(spec, cann),
            cann=cann_text,
            facts=facts,
            silent=silent,
            ambiguity=ambiguity,
            reason=reason,
        )
    )


# --- kinds ------------------------------------------------------------------
_req(
    "KIND-ACCEPTED",
    "kinds",
    "A copy with kind ACL_MEMCPY_HOST_TO_DEVICE (1) or ACL_MEMCPY_DEFAULT (4) and otherwise "
    "valid arguments succeeds and writes the variable.",
    [KINDS_SUPPORTED, KIND_IS],
    MUST,
    MUST,
)
_req(
    "KIND-REJECTED",
    "kinds",
    "Every other aclrtMemcpyKind value (0, 2, 3, 5, 6, 7) is rejected, and the rejected call "
    "changes nothing.",
    [KINDS_SUPPORTED, KIND_TYPE],
    MUST,
    MUST,
    cann_text="ACL_ERROR_INVALID_PARAM (100000), checked after NULL symbol and NULL src and before "
    "the symbol lookup.",
    facts=("MEM:2385-2395 kind not in {1, 4} gives INVALID_PARAM",),
)
_req(
    "KIND-OUT-OF-ENUM",
    "kinds",
    "A kind value outside the enum (-1, 8, 999, INT32_MAX) is rejected and changes nothing.",
    [KINDS_SUPPORTED, KIND_TYPE],
    MUST,
    MUST,
    cann_text="ACL_ERROR_INVALID_PARAM (100000), as for the other rejected kinds.",
    facts=("MEM:2385-2395 everything but 1 and 4 is rejected, including 999",),
)
_req(
    "KIND-DEFAULT-HOST-SOURCE",
    "kinds",
    "With a host source, ACL_MEMCPY_DEFAULT behaves exactly as ACL_MEMCPY_HOST_TO_DEVICE.",
    [KINDS_SUPPORTED, HOST_MEMORY],
    SHOULD,
    MUST,
    cann_text="The call is sent down as RT_MEMCPY_HOST_TO_DEVICE whatever the kind.",
    facts=(
        "MEM:2447-2448 rtMemcpyAsync(..., RT_MEMCPY_HOST_TO_DEVICE, stream) for both kinds",
        "AERR:2694-2787 online mode auto-corrects a device src to D2D",
    ),
    silent="The text does not say what DEFAULT infers.  The suite only passes host memory as "
    "src (the only source the text names), so a device-memory src, which CANN would silently "
    "turn into a device-to-device copy, is not tested.",
    ambiguity=(4,),
    reason="SHOULD under spec: DEFAULT's meaning is implied by the call's function "
    "(host to device), not stated.",
)

# --- bounds -----------------------------------------------------------------
_req(
    "BOUNDS-END-EXACT",
    "bounds",
    "offset + count equal to the variable's size is accepted and writes the last byte.",
    [BOUND, SIZE_FROM_GETSYMBOLSIZE],
    MUST,
    MUST,
)
_req(
    "BOUNDS-PAST-END",
    "bounds",
    "offset + count greater than the variable's size (one byte past, or more; offset alone "
    "past the end) is rejected and changes nothing.",
    [BOUND, COUNT_BYTES, OFFSET_BYTES],
    MUST,
    MUST,
    cann_text="ACL_ERROR_INVALID_PARAM (100000), checked after the symbol lookup and the overflow "
    "check.",
    facts=("MEM:2287-2294 offset + count > symbolSize gives INVALID_PARAM",),
)
_req(
    "BOUNDS-OVERFLOW",
    "bounds",
    "offset + count that wraps size_t is rejected, not wrapped, and changes nothing.",
    [BOUND, SIGNATURE],
    MUST,
    MUST,
    cann_text="ACL_ERROR_FAILURE (500001), not 100000, checked after the symbol lookup and before "
    "the bounds check.",
    facts=(
        "MEM:2286 ACL_CHECK_ASSIGN_SIZET_ADD(offset, count, total)",
        "MU:50-58 CheckSizeTAddOverflow returns ACL_ERROR_FAILURE when a > SIZE_MAX - b",
        "UTA:10069-10122 count 1, offset SIZE_MAX gives 500001",
    ),
    ambiguity=(3,),
    reason="The bound is arithmetic (offset + count ≤ size); a wrapped sum does not meet it.",
)
_req(
    "COUNT-ZERO",
    "bounds",
    "count == 0 copies nothing.",
    [COUNT_BYTES, RETURNS],
    MAY,
    MUST,
    cann_text="count == 0 returns ACL_SUCCESS before any other check: a NULL symbol or src, a bad "
    "kind and a bad stream all succeed; nothing changes.",
    facts=(
        "MEM:2430-2433 count == 0 returns ACL_SUCCESS before anything else",
        "UTA:10124-10182 count 0 gives 0",
    ),
    silent="The text does not say whether count == 0 is an error (HIP on NVIDIA rejects it, "
    "CANN accepts it).  Under spec the suite accepts success or a rejection, with any other "
    "argument, and only checks that nothing changes.",
    ambiguity=(2,),
)

# --- effect -----------------------------------------------------------------
_req(
    "EFFECT-BYTES",
    "effect",
    "Once the copy is complete, bytes [offset, offset + count) of the variable equal the count "
    "source bytes.",
    [FUNCTION, WRITES_VARIABLE, COUNT_BYTES, OFFSET_BYTES],
    MUST,
    MUST,
)
_req(
    "EFFECT-NO-STRAY",
    "effect",
    "No byte of the variable outside [offset, offset + count) changes.",
    [WRITES_VARIABLE, COUNT_BYTES, OFFSET_BYTES],
    MUST,
    MUST,
)
_req(
    "EFFECT-NEIGHBOURS",
    "effect",
    "No other device variable changes (the fixture lays variables out next to each other).",
    [WRITES_VARIABLE, SYMBOL_ADDR],
    MUST,
    MUST,
)

# --- pinned -----------------------------------------------------------------
_req(
    "PINNED-ASYNC",
    "pinned",
    "With page-locked host memory (from aclrtMallocHost) the call does not wait for the copy: "
    "behind a task that blocks its stream it returns at once, with success.",
    [HOST_MEMORY, PINNED_ASYNC, DELIVERED],
    MUST,
    MUST,
    facts=("AIMP:2867-2899 pinned path: LaunchAsyncCopy, a true async task",),
)
_req(
    "PINNED-COMPLETE-AFTER-SYNC",
    "pinned",
    "After a synchronisation that covers the copy (aclrtSynchronizeStream, an event it waited "
    "for, aclrtSynchronizeDevice) has returned, the copy is complete.",
    [SYNC_TO_COMPLETE, DELIVERED],
    MUST,
    MUST,
)
_req(
    "PINNED-SOURCE-WINDOW",
    "pinned",
    "Until the synchronisation the source may be read at any moment, byte by byte: if the "
    "caller changes it before the sync, each destination byte may hold any value that source "
    "byte held in that window, and no other.",
    [DELIVERED, SYNC_TO_COMPLETE],
    MAY,
    MAY,
    silent="The text does not say when the source is read.  The suite accepts every value a "
    "source byte held between the call and the synchronisation (reading at the call included).",
)
_req(
    "PINNED-REGISTERED",
    "pinned",
    "Memory page-locked with aclrtHostRegister acts as page-locked memory; after "
    "aclrtHostUnregister it is pageable again.",
    [HOST_MEMORY, PINNED_ASYNC],
    SHOULD,
    MUST,
    cann_text="A source whose start pointer lies in a registered range takes the async path.",
    facts=(
        "npu_driver_mem.cc:2125-2130 DV_MEM_USER_REGISTER gives HOST; USER_MALLOC only if "
        "IsRegisteredMemory",
        "register_memory.cc:20-40 range containment of the start pointer",
    ),
    reason="SHOULD under spec: the text names aclrtMallocHost as an example of page-locked "
    "memory; registration is the other documented way to page-lock.",
)
_req(
    "PINNED-START-POINTER",
    "pinned",
    "A source that starts in page-locked memory and runs past it: CANN decides by the start "
    "pointer alone.",
    [HOST_MEMORY],
    MAY,
    MAY,
    cann_text="Treated as page-locked (async) when the start pointer is registered.",
    facts=("register_memory.cc:20-40 only the start pointer is tested",),
    silent="The text assumes the whole source is pinned or the whole of it pageable.  The "
    "suite judges such a copy as either (memory may be read any time up to the sync, the call "
    "may or may not wait) and never uses it where the difference matters.",
    ambiguity=(7,),
)

# --- pageable ---------------------------------------------------------------
_req(
    "PAGEABLE-BLOCKS",
    "pageable",
    "With pageable host memory (malloc) the call returns only after the copy is complete: "
    "the bytes are there at return without a sync, and behind a task that blocks its stream "
    "the call does not return before that task has finished.",
    [HOST_MEMORY, PAGEABLE_RETURNS],
    MUST,
    MUST,
    facts=("AERR:2256-2269 pageable path: StreamSynchronize(stm, -1), then a synchronous copy",),
)
_req(
    "PAGEABLE-SOURCE-REUSE",
    "pageable",
    "The caller may overwrite or free a pageable source right after the call returns; the "
    "device holds the bytes as they were at the call.",
    [PAGEABLE_RETURNS],
    MUST,
    MUST,
)
_req(
    "PAGEABLE-DRAINS-STREAM",
    "pageable",
    "A pageable copy waits for every earlier task of its stream before it copies, so on "
    "return the earlier copies of that stream are complete too.",
    [PAGEABLE_RETURNS, STREAM_FOR],
    SHOULD,
    MUST,
    cann_text="StreamSynchronize(stm, -1) runs first and its error (an earlier failed task) is "
    "returned; then a synchronous copy.",
    facts=(
        "AERR:2256-2269 the pageable branch synchronises the stream, then copies",
        "raw_device.cc:252, AERR:2813-2826 without FEATURE_SVM_GET_USER_MALLOC_ATTR every "
        "pointer takes the async path",
    ),
    ambiguity=(6,),
    reason="SHOULD under spec: follows from stream order plus 'returns only after the copy "
    "task is complete', but is not said.  A CANN driver without GET_USER_MALLOC_ATTR treats "
    "malloc memory as pinned and fails PAGEABLE-BLOCKS; that is a finding, not a suite error.",
)

# --- streams ----------------------------------------------------------------
_req(
    "STREAM-FIFO",
    "streams",
    "Tasks of one stream run in issue order: a copy does not execute before the tasks issued "
    "before it on its stream, and a later copy to an overlapping range wins.",
    [STREAM_FOR, STREAM_TYPE, DELIVERED],
    MUST,
    MUST,
    reason="aclrtStream is an in-order queue (the type the text refers to).",
)
_req(
    "STREAM-UNORDERED",
    "streams",
    "Tasks of different streams are unordered unless an event orders them: any interleaving "
    "of their copies, byte by byte, is accepted.",
    [STREAM_FOR, STREAM_TYPE],
    MAY,
    MAY,
    silent="Nothing orders two streams; the suite accepts every outcome some interleaving "
    "could produce.",
)
_req(
    "STREAM-EVENT-ORDER",
    "streams",
    "aclrtRecordEvent on one stream and aclrtStreamWaitEvent on another order the waiting "
    "stream's later tasks after the tasks the record captured.",
    [STREAM_FOR, STREAM_TYPE],
    MUST,
    MUST,
    silent="A wait on an event that was never recorded orders nothing; the suite assumes no "
    "order then.",
)
_req(
    "STREAM-NULL-DEFAULT",
    "streams",
    "stream == NULL selects the default stream of the current device.",
    [STREAM_FOR, STREAM_TYPE],
    SHOULD,
    MUST,
    cann_text="NULL is never rejected: the pinned path uses the context's default stream, the "
    "pageable path synchronises the default stream.",
    facts=(
        "HG:110-115 the validator accepts a null handle",
        "AIMP:2877-2881 pinned path uses the default stream",
        "AIMP:1687-1689 StreamSynchronize(nullptr) resolves to the default stream",
        "UTA:10143-10145 expects 100000 for NULL only because the unmocked lookup leaves size 0",
    ),
    silent="The text does not mention NULL.  Under spec, a backend that declares the "
    "default-stream capability must treat NULL as its default stream; one that does not may "
    "reject it (reported as not supported).",
    ambiguity=(1,),
)
_req(
    "STREAM-INVALID-HANDLE",
    "streams",
    "A destroyed stream, or a handle that is not a stream, is rejected; nothing is enqueued.",
    [STREAM_FOR, STREAM_TYPE],
    SHOULD,
    MUST,
    cann_text="ACL_ERROR_RT_INVALID_HANDLE (107017), from the runtime's handle validation, after "
    "every ACL-layer check.",
    facts=(
        "HG:70-94 magic mismatch gives RT_ERROR_INVALID_HANDLE (107017)",
        "context.cc:1007,1056 destroy zeroes the magic",
    ),
    silent="The text says nothing about bad handles.  CANN detects them only while the "
    "handle's memory is readable; the suite only passes such handles (adapters must provide "
    "readable garbage), never wild pointers.",
    ambiguity=(12,),
    reason="SHOULD under spec: a stream that does not exist cannot execute the task, but the "
    "text does not demand an error code.",
)
_req(
    "STREAM-FOREIGN-DEVICE",
    "streams",
    "A stream created on another device than the current one.",
    [STREAM_FOR, RESTRICTIONS],
    MAY,
    MUST,
    cann_text="Pinned path: ACL_ERROR_RT_STREAM_CONTEXT (107003).  Pageable path: success (the "
    "stream's context is switched to for the drain) or 107003; the facts only infer this.",
    facts=(
        "AIMP:2882-2883 a stream from another context gives 107003 on the pinned path",
        "AIMP:1719-1727 StreamSynchronize switches to the stream's context (inference)",
    ),
    silent="The text does not say.  Under spec the suite accepts a rejection, or success that "
    "writes the current device's instance in that stream's order.",
    ambiguity=(8,),
)

# --- symbols ----------------------------------------------------------------
_req(
    "SYMBOL-NULL",
    "symbols",
    "symbol == NULL is rejected and changes nothing.",
    [SYMBOL_ADDR, RESTRICTIONS],
    MUST,
    MUST,
    cann_text="ACL_ERROR_INVALID_PARAM (100000), the first check after count == 0.",
    facts=("MEM:2382 symbol NULL gives ACL_ERROR_INVALID_PARAM",),
)
_req(
    "SYMBOL-UNREGISTERED",
    "symbols",
    "An address that is not a registered device variable (another host address) is rejected "
    "and changes nothing.",
    [SYMBOL_ADDR, GM, RESTRICTIONS],
    MUST,
    MUST,
    cann_text="ACL_ERROR_RT_INVALID_SYMBOL (107043), not 107042, from the lookup after the NULL "
    "and kind checks.",
    facts=(
        "ST:58-73 exact map::find; a miss gives RT_ERROR_INVALID_SYMBOL -> 107043",
        "UTS:73-81 unregistered &local gives 107043",
        "RTH:2441-2443 the header lists ACL_ERROR_RT_INVALID_SYMBOL",
    ),
    ambiguity=(13,),
    reason="The header and doc suggest 107042 (SYMBOL_NOT_FOUND) for a missing symbol, but "
    "lookups return 107043; cann follows the code.",
)
_req(
    "SYMBOL-INTERIOR",
    "symbols",
    "A pointer into the middle of a registered variable (symbol + k, k > 0) is not a symbol: "
    "rejected, nothing changes.",
    [SYMBOL_ADDR, RESTRICTIONS],
    MUST,
    MUST,
    cann_text="ACL_ERROR_RT_INVALID_SYMBOL (107043): the lookup is an exact match on the host "
    "shadow address.",
    facts=("ST:58-73 exact map::find on the host pointer",),
    ambiguity=(9,),
)
_req(
    "SRC-NULL",
    "symbols",
    "src == NULL with count > 0 is rejected and changes nothing.",
    [SRC_PTR],
    SHOULD,
    MUST,
    cann_text="ACL_ERROR_INVALID_PARAM (100000), checked after NULL symbol, before the kind.",
    facts=("MEM:2383 src NULL gives INVALID_PARAM",),
    reason="SHOULD under spec: src must point to the source memory; the text does not say "
    "what NULL yields, but no success is meaningful.",
)
_req(
    "SYMBOL-SIZE-AS-DECLARED",
    "symbols",
    "aclrtGetSymbolSize reports the variable's declared size, and that size is the bound of "
    "the copy.",
    [SIZE_FROM_GETSYMBOLSIZE, BOUND],
    MUST,
    MUST,
    cann_text="The registered size is the compiler's value (stored as uint32); a duplicate "
    "registration keeps the first entry.",
    facts=(
        "ST:36-37 offset and the caller's size stored as uint32",
        "ST:41-48 re-registering the same hostVar keeps the first entry",
    ),
    silent="Variables of 4 GiB or more, whose size CANN would truncate, are not in the "
    "fixture; duplicate registration cannot be provoked from the ACL API.",
    ambiguity=(11,),
)
_req(
    "CHECK-ORDER",
    "symbols",
    "With several invalid arguments, which error is returned.",
    [RETURNS, RETURNS_ACLERROR],
    MAY,
    MUST,
    cann_text="count == 0; NULL symbol; NULL src; kind; lookup (107002 no context, 107043 not a "
    "symbol); overflow (500001); bounds (100000); then the runtime's stream checks (107017 "
    "bad handle, 107003 foreign stream on the pinned path). The first failing check decides.",
    facts=("MEM:2425-2450 the order of aclrtMemcpyToSymbolAsyncImpl", "APIC:1103-1119"),
    silent="The text gives no order; under spec any non-zero code is accepted when several "
    "arguments are wrong.",
    ambiguity=(5,),
)

# --- devices ----------------------------------------------------------------
_req(
    "DEVICE-INSTANCE",
    "devices",
    "Each device has its own instance of every variable: a copy made while device 0 is "
    "current leaves device 1's instance untouched.",
    [RESTRICTIONS, SYMBOL_ADDR],
    MUST,
    MUST,
    facts=(
        "D11:62-67 the address is valid only on the current Device",
        "ST:84-91 per-device Load2Device and base address",
    ),
)
_req(
    "DEVICE-CURRENT",
    "devices",
    "The copy writes the instance of the device that is current in the calling thread.",
    [RESTRICTIONS],
    MUST,
    MUST,
    cann_text="With no current context the lookup fails with ACL_ERROR_RT_CONTEXT_NULL (107002), "
    "unless a default device is configured and set implicitly.",
    facts=("AIMP:413-417 lookup needs a current context", "runtime.cc:5397-5432"),
)
_req(
    "DEVICE-RESET-CONTENTS",
    "devices",
    "What a variable holds after aclrtResetDevice and a new aclrtSetDevice.",
    [RESTRICTIONS],
    MAY,
    MAY,
    silent="Per-device copies are loaded lazily; their contents after a reset or reload are "
    "not specified.  The suite accepts any bytes after a reset and takes what it reads then "
    "as the new starting point.  Initial contents are read from the backend, never assumed.",
    ambiguity=(10,),
)

# --- hygiene ----------------------------------------------------------------
_req(
    "RETURN-CODES",
    "hygiene",
    "A call returns 0 exactly when it succeeds; a failure is a non-zero aclError.",
    [RETURNS, RETURNS_ACLERROR],
    MUST,
    MUST,
)
_req(
    "HYGIENE-NO-WRITE",
    "hygiene",
    "A rejected call writes nothing, now or later.",
    [RETURNS],
    MUST,
    MUST,
)
_req(
    "HYGIENE-NO-ENQUEUE",
    "hygiene",
    "A rejected call enqueues nothing: the stream stays complete and no copy appears after "
    "a later synchronisation.",
    [RETURNS, DELIVERED],
    MUST,
    MUST,
)
_req(
    "HYGIENE-STREAM-USABLE",
    "hygiene",
    "After a rejected call the stream still works: a later valid copy on it succeeds and "
    "lands, and synchronising it returns 0.",
    [RETURNS, STREAM_FOR],
    MUST,
    MUST,
)
_req(
    "SYNC-ERROR-REPORTING",
    "hygiene",
    "Synchronising a stream whose tasks all succeeded returns 0; a rejected call leaves no "
    "error behind for the next synchronisation.",
    [SYNC_TO_COMPLETE, RETURNS],
    MUST,
    MUST,
    cann_text="A failed async task is reported once, at synchronize time, then cleared (unless "
    "ABORT_ON_FAILURE).",
    facts=("SCC:1790-1830 Stream::GetError", "SCC:1826-1828 the error is cleared once reported"),
    silent="The suite cannot make a device task fail on purpose, so only the first half "
    "(no error without a failure) is checked.",
    ambiguity=(15,),
)
_req(
    "PRODUCT-NOT-SUPPORTED",
    "hygiene",
    "On a product without support (the Applicable Products table) the symbol APIs may fail "
    "with ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000); the suite reports 'not supported'.",
    [PRODUCT_TABLE_HEADING, RETURNS],
    MAY,
    MAY,
    facts=("api_c_stub.cc:1312-1318 stub or tiny builds return 207000",),
    silent="The product table says which products support the call but not what the others "
    "return.  The suite treats ACL_ERROR_RT_FEATURE_NOT_SUPPORT from every symbol call as "
    "'not supported', never as a failure.",
)

# --- concurrency ------------------------------------------------------------
_req(
    "CONCURRENCY-THREADS",
    "concurrency",
    "Several host threads, each with its own stream and variables, may copy at once; every "
    "copy lands and none is lost or mixed with another thread's.",
    [FUNCTION, STREAM_FOR],
    SHOULD,
    SHOULD,
    silent="The text says nothing about threads.  CANN contexts are per thread and the "
    "default context is shared per device.",
    reason="SHOULD: thread safety is a runtime-wide property the page does not state.",
)

# --- companion calls ---------------------------------------------------------
_req(
    "TOSYMBOL-SYNC",
    "companion",
    "aclrtMemcpyToSymbol checks its arguments as the async call does and has completed the "
    "copy when it returns.",
    [BOUND, KINDS_SUPPORTED],
    MUST,
    MUST,
    cann_text="Same order of checks, then rtMemcpy(dst, size - offset, src, count, H2D).",
    facts=("MEM:2399-2423", "UTA:10069-10122"),
)
_req(
    "FROMSYMBOL-KINDS",
    "companion",
    "aclrtMemcpyFromSymbol[Async] accept only ACL_MEMCPY_DEVICE_TO_HOST (2) and "
    "ACL_MEMCPY_DEFAULT (4).",
    [RESTRICTIONS],
    MUST,
    MUST,
    cann_text="ACL_ERROR_INVALID_PARAM (100000), checked after NULL symbol, NULL dst and "
    "count > dstMax.",
    facts=("D11:176,240", "MEM:2299-2325", "UTA:9946-10003 kind 999 and kind H2D give 100000"),
)
_req(
    "FROMSYMBOL-DSTMAX",
    "companion",
    "aclrtMemcpyFromSymbol[Async] reject count > dstMax and change nothing.",
    [RESTRICTIONS],
    MUST,
    MUST,
    cann_text="ACL_ERROR_INVALID_PARAM (100000), before the kind check.",
    facts=("D11:172,236 dstMax >= count", "MEM:2304-2310", "UTA count 10, dstMax 5 gives 100000"),
)
_req(
    "FROMSYMBOL-BYTES",
    "companion",
    "aclrtMemcpyFromSymbol[Async] read bytes [offset, offset + count) of the current "
    "device's instance into dst, with the bounds, NULL and symbol checks of the To calls.",
    [RESTRICTIONS, BOUND],
    MUST,
    MUST,
    cann_text="count == 0 succeeds first; NULL symbol, NULL dst give 100000; lookup 107043; "
    "overflow 500001; bounds 100000.  The async call with pinned dst is complete after a "
    "synchronisation; with pageable dst it drains the stream and returns complete.",
    facts=("MEM:2327-2378", "UTA:9946-10067"),
)
_req(
    "GETSYMBOL-ADDRESS",
    "companion",
    "aclrtGetSymbolAddress returns 0 and a non-NULL device address for a registered "
    "variable, and rejects a NULL symbol, a NULL output pointer and a non-symbol.",
    [RESTRICTIONS, SYMBOL_ADDR],
    MUST,
    MUST,
    cann_text="NULL symbol, then NULL devPtr: 100000; then the lookup's code (107043).",
    facts=("MEM:2253-2277", "UTA:9918-9944"),
)
_req(
    "GETSYMBOL-SIZE",
    "companion",
    "aclrtGetSymbolSize returns 0 and the declared size for a registered variable, and "
    "rejects a NULL symbol, a NULL output pointer and a non-symbol.",
    [SIZE_FROM_GETSYMBOLSIZE],
    MUST,
    MUST,
    cann_text="NULL symbol, then NULL size: 100000; then the lookup's code (107043).",
    facts=("MEM:2253-2277",),
)
_req(
    "SYNC-TIMEOUT",
    "companion",
    "aclrtSynchronizeStreamWithTimeout waits for the stream or times out with an error; it "
    "never reports success while a task of the stream is still blocked.",
    [SYNC_TO_COMPLETE],
    MUST,
    MUST,
    cann_text="timeout < -1 gives 107000 at the ACL layer; timeout == 0 gives 107000 in the "
    "runtime; a timeout gives ACL_ERROR_RT_STREAM_SYNC_TIMEOUT (507046); a bad handle 107017.",
    facts=("ASTR:137-165", "AERR:1442-1444", "SCC:1957-1960"),
    silent="What timeout 0 means is not said; under spec any answer but a false success is "
    "accepted.  A copy that legitimately takes longer than the timeout may time out.  "
    "-1 waits forever (acl_rt.h:2822) under both profiles: it never returns "
    "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, nor anything while a closed gate holds the stream.",
    ambiguity=(14,),
)
_req(
    "STREAM-QUERY",
    "companion",
    "aclrtStreamQuery reports NOT_READY while a task of the stream is blocked, COMPLETE once "
    "everything was synchronised, and COMPLETE only when its copies are complete.",
    [SYNC_TO_COMPLETE, STREAM_TYPE],
    MUST,
    MUST,
    facts=("ASTR:167-182 507004 maps to NOT_READY",),
)
_req(
    "EVENT-CALLS",
    "companion",
    "aclrtCreateEvent, aclrtRecordEvent, aclrtStreamWaitEvent, aclrtSynchronizeEvent and "
    "aclrtDestroyEvent succeed on valid arguments and reject a NULL event.",
    [SYNC_TO_COMPLETE],
    MUST,
    MUST,
    cann_text="A NULL event gives 100000; the stream is passed straight through.",
    facts=("event.cpp:28-181", "ASTR:229-237"),
    silent="Synchronising an event that was never recorded returns at once under both "
    "profiles (success, or an error, without any effect).",
)
_req(
    "STREAM-CALLS",
    "companion",
    "aclrtCreateStream, aclrtDestroyStream and aclrtSynchronizeStream succeed on valid "
    "arguments and reject a NULL output pointer, a NULL stream to destroy and bad handles.",
    [STREAM_TYPE],
    MUST,
    MUST,
    cann_text="NULL output / NULL stream to destroy: 100000; bad handles 107017.  "
    "aclrtDestroyStream waits for the stream's tasks first.",
    facts=(
        "ASTR:38-51",
        "ASTR:95-106",
        "api_c_stream.cc:146-185",
        "06_stream_management.md:248 destroy waits for pending tasks",
    ),
    silent="The text says nothing of aclrtDestroyStream with tasks pending: under spec the "
    "tasks not yet run may run after the call or be discarded (the bytes of their copies "
    "are then either the old or the new ones, and synchronising an event recorded among "
    "them may succeed or fail); under cann the destroy waits for them.",
)
_req(
    "HOST-MEMORY-CALLS",
    "companion",
    "aclrtMallocHost returns page-locked memory and rejects size 0; aclrtHostRegister "
    "rejects a misaligned or already registered range, and a range unregistered since is "
    "registered no more; aclrtHostUnregister rejects memory that is not registered.",
    [HOST_MEMORY],
    MUST,
    MUST,
    cann_text="aclrtMallocHost: size 0 gives 100000, memory 64-byte aligned.  aclrtHostRegisterV2: "
    "the pointer must be 4 KB aligned; an overlapping range gives 507910 (without driver pin "
    "support).  aclrtHostUnregister of unregistered memory gives 507911.",
    facts=("MEM:577-588", "11-02:292,348,350", "AIMP:2598-2599", "AIMP:2638-2641"),
)
_req(
    "DEVICE-CALLS",
    "companion",
    "aclrtSetDevice, aclrtGetDevice, aclrtGetDeviceCount and aclrtResetDevice succeed on "
    "valid devices, reject an invalid device id, and report the current device.",
    [RESTRICTIONS],
    MUST,
    MUST,
    facts=("device.cpp:131-142", "04_device_management.md:86,153-155"),
)
_req(
    "INIT-CALLS",
    "companion",
    "aclInit and aclFinalize succeed once; a repeated aclInit or aclFinalize is reported.",
    [RETURNS_ACLERROR],
    MAY,
    MUST,
    cann_text="A repeated aclInit gives 100002; a repeated aclFinalize gives 100037.  The symbol "
    "calls themselves do not check initialisation.",
    facts=("acl.cpp:382-392", "acl.cpp:630-637", "acl_rt.cpp:40 no aclInit check"),
    silent="The text does not cover initialisation; under spec any code is accepted for a repeat.",
)


CATALOGUE: tuple[Requirement, ...] = tuple(_R)
"""Every requirement, in catalogue order."""

_BY_ID: dict[str, Requirement] = {r.id: r for r in CATALOGUE}
if len(_BY_ID) != len(CATALOGUE):  # pragma: no cover - a typo in the table above
    raise RuntimeError("duplicate requirement id in the catalogue")

BY_ID: Mapping[str, Requirement] = MappingProxyType(_BY_ID)


def requirement(req_id: str) -> Requirement:
    """The requirement with ``req_id``; KeyError names the unknown ID."""
    try:
        return BY_ID[req_id]
    except KeyError:
        raise KeyError(f"unknown requirement id {req_id!r}") from None


def for_profile(profile: str) -> tuple[Requirement, ...]:
    """The requirements that apply under ``profile``, in catalogue order."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    return tuple(r for r in CATALOGUE if r.applies_to(profile))
