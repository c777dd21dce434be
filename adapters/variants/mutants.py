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
from .mutants_arguments import CountZeroRejected
from .mutants_arguments import DestroyedStreamAccepted
from .mutants_arguments import DeviceToHostAccepted
from .mutants_arguments import DstMaxIgnored
from .mutants_arguments import ForeignStreamAccepted
from .mutants_arguments import GenericErrorCodes
from .mutants_arguments import NullStreamRejected
from .mutants_arguments import OutOfEnumAccepted
from .mutants_arguments import OverflowIsInvalidParam
from .mutants_arguments import SizeRoundedUp
from .mutants_arguments import SymbolNotFoundCode
from .mutants_bounds import BoundLessThan
from .mutants_bounds import BoundOnePast
from .mutants_bounds import InteriorPointerAccepted
from .mutants_bounds import OffsetIgnored
from .mutants_bounds import OneByteTooMany
from .mutants_bounds import OverflowWraps
from .mutants_bounds import RejectedStillEnqueues
from .mutants_bounds import SourceOffByOne
from .mutants_bounds import SyncBoundWrapsPastTheEnd
from .mutants_ordering import EventWaitIgnored
from .mutants_ordering import PageableDeferred
from .mutants_ordering import PageableSkipsTheDrain
from .mutants_ordering import PinnedBlocks
from .mutants_ordering import QueryAlwaysComplete
from .mutants_ordering import QueryBusyOnceUsed
from .mutants_ordering import RegisteredIsPageable
from .mutants_ordering import SharedInstance
from .mutants_ordering import StreamOrderBroken
from .mutants_ordering import SyncReturnsEarly
from .mutants_ordering import ThreadsLoseWrites

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
    "PageableSkipsTheDrain",
    "PinnedBlocks",
    "QueryAlwaysComplete",
    "QueryBusyOnceUsed",
    "RegisteredIsPageable",
    "RejectedStillEnqueues",
    "SharedInstance",
    "SizeRoundedUp",
    "SourceOffByOne",
    "StreamOrderBroken",
    "SymbolNotFoundCode",
    "SyncBoundWrapsPastTheEnd",
    "SyncReturnsEarly",
    "ThreadsLoseWrites",
]
