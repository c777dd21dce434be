"""The requirement IDs the model's own code charges, each checked against the catalogue.

The model names a requirement when it records a check or charges a violation.  Each
ID it uses is a constant here, made by ``req``, which raises at import if the
catalogue (``catalogue.BY_ID``) has no such requirement: a misspelt or retired ID
stops the model from loading instead of charging a requirement no report knows.
"""

from __future__ import annotations

from .catalogue import BY_ID


def req(requirement_id: str) -> str:
    """``requirement_id`` itself, once checked to be in the catalogue (else ValueError)."""
    if requirement_id not in BY_ID:
        raise ValueError(f"{requirement_id!r} is not a requirement of the catalogue")
    return requirement_id


DEVICE_CALLS = req("DEVICE-CALLS")
DEVICE_CURRENT = req("DEVICE-CURRENT")
DEVICE_INSTANCE = req("DEVICE-INSTANCE")
DEVICE_RESET_CONTENTS = req("DEVICE-RESET-CONTENTS")
EFFECT_BYTES = req("EFFECT-BYTES")
EFFECT_NEIGHBOURS = req("EFFECT-NEIGHBOURS")
EFFECT_NO_STRAY = req("EFFECT-NO-STRAY")
EVENT_CALLS = req("EVENT-CALLS")
FROMSYMBOL_BYTES = req("FROMSYMBOL-BYTES")
FROMSYMBOL_KINDS = req("FROMSYMBOL-KINDS")
GETSYMBOL_ADDRESS = req("GETSYMBOL-ADDRESS")
HOST_MEMORY_CALLS = req("HOST-MEMORY-CALLS")
HYGIENE_NO_ENQUEUE = req("HYGIENE-NO-ENQUEUE")
HYGIENE_NO_WRITE = req("HYGIENE-NO-WRITE")
HYGIENE_STREAM_USABLE = req("HYGIENE-STREAM-USABLE")
KIND_DEFAULT_HOST_SOURCE = req("KIND-DEFAULT-HOST-SOURCE")
PAGEABLE_BLOCKS = req("PAGEABLE-BLOCKS")
PAGEABLE_DRAINS_STREAM = req("PAGEABLE-DRAINS-STREAM")
PAGEABLE_SOURCE_REUSE = req("PAGEABLE-SOURCE-REUSE")
PINNED_ASYNC = req("PINNED-ASYNC")
PINNED_COMPLETE_AFTER_SYNC = req("PINNED-COMPLETE-AFTER-SYNC")
PINNED_REGISTERED = req("PINNED-REGISTERED")
PINNED_SOURCE_WINDOW = req("PINNED-SOURCE-WINDOW")
PINNED_START_POINTER = req("PINNED-START-POINTER")
RETURN_CODES = req("RETURN-CODES")
STREAM_CALLS = req("STREAM-CALLS")
STREAM_EVENT_ORDER = req("STREAM-EVENT-ORDER")
STREAM_FIFO = req("STREAM-FIFO")
STREAM_QUERY = req("STREAM-QUERY")
STREAM_UNORDERED = req("STREAM-UNORDERED")
SYMBOL_SIZE_AS_DECLARED = req("SYMBOL-SIZE-AS-DECLARED")
SYNC_ERROR_REPORTING = req("SYNC-ERROR-REPORTING")
SYNC_TIMEOUT = req("SYNC-TIMEOUT")
TOSYMBOL_SYNC = req("TOSYMBOL-SYNC")
