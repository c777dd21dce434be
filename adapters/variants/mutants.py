"""Realistic backend bugs, each a small change to the bundled simulator.

Every class overrides as little as it can, mostly through the contract's own
methods, so that the bug is the only difference.  The classes live by area in
``mutants_bounds``, ``mutants_arguments`` and ``mutants_ordering`` (over
``mutant_base``); this module gathers them, so that each is named
``acl_conformance.adapters.variants.mutants:<Class>`` (the catalogue and
``--adapter`` use that path).
"""

from __future__ import annotations

from .mutant_base import MutantBase
from .mutants_arguments import (
    CountZeroRejected,
    DestroyedStreamAccepted,
    DeviceToHostAccepted,
    DstMaxIgnored,
    ForeignStreamAccepted,
    GenericErrorCodes,
    NullStreamRejected,
    OutOfEnumAccepted,
    OverflowIsInvalidParam,
    SizeRoundedUp,
    SymbolNotFoundCode,
)
from .mutants_bounds import (
    BoundLessThan,
    BoundOnePast,
    InteriorPointerAccepted,
    OffsetIgnored,
    OneByteTooMany,
    OverflowWraps,
    RejectedStillEnqueues,
    SourceOffByOne,
)
from .mutants_ordering import (
    EventWaitIgnored,
    PageableDeferred,
    PinnedBlocks,
    QueryAlwaysComplete,
    RegisteredIsPageable,
    SharedInstance,
    StreamOrderBroken,
    SyncReturnsEarly,
    ThreadsLoseWrites,
)

_Helpers = MutantBase
"""The name corner_mutants imports the base by."""

__all__ = [
    "BoundLessThan",
    "BoundOnePast",
    "CountZeroRejected",
    "DestroyedStreamAccepted",
    "DeviceToHostAccepted",
    "DstMaxIgnored",
    "EventWaitIgnored",
    "ForeignStreamAccepted",
    "GenericErrorCodes",
    "InteriorPointerAccepted",
    "MutantBase",
    "NullStreamRejected",
    "OffsetIgnored",
    "OneByteTooMany",
    "OutOfEnumAccepted",
    "OverflowIsInvalidParam",
    "OverflowWraps",
    "PageableDeferred",
    "PinnedBlocks",
    "QueryAlwaysComplete",
    "RegisteredIsPageable",
    "RejectedStillEnqueues",
    "SharedInstance",
    "SizeRoundedUp",
    "SourceOffByOne",
    "StreamOrderBroken",
    "SymbolNotFoundCode",
    "SyncReturnsEarly",
    "ThreadsLoseWrites",
]
