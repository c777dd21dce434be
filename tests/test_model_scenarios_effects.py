"""The model's scenarios, continued: the synchronous copy, strays and neighbours, devices and threads, rejected calls, asynchronous reads, host memory edge cases, device reset."""

from __future__ import annotations

from model_scenarios_support import H2D
from model_scenarios_support import PAGE
from model_scenarios_support import PIN
from model_scenarios_support import after
from model_scenarios_support import announce_copy
from model_scenarios_support import copy
from model_scenarios_support import init
from model_scenarios_support import observe
from model_scenarios_support import read_async
from model_scenarios_support import reqs
from model_scenarios_support import w_fixture  # noqa: F401 (a fixture, by its name= )
from world import PAGEABLE
from world import PINNED
from world import Announced
from world import W
from world import announce
from world import call
from world import observe_now

from acl_conformance.reference_impl.observation import check_read


# --- the synchronous copy ------------------------------------------------------
def test_memcpy_to_symbol_is_complete_at_return_but_unordered_with_streams(w: W) -> None:
    assert copy(w, count=8) == []  # pinned, pending
    assert (
        call(
            w.model,
            "memcpy_to_symbol",
            0,
            symbol=w.sym["g_arr256"],
            src=PAGEABLE,
            count=8,
            offset=0,
            kind=H2D,
        )
        == []
    )
    # the pending pinned copy may still land on top
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:8])) == set()
    assert observe(w, "g_arr256", after("g_arr256", 0, PIN[:8])) == set()
    assert observe(w, "g_arr256", init("g_arr256")) == {"TOSYMBOL-SYNC"}


# --- effect: strays, neighbours, devices, hygiene --------------------------------
def test_stray_byte_in_the_same_variable(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=4, offset=4) == []
    data = bytearray(after("g_arr256", 4, PAGE[:4]))
    data[8] ^= 0xFF
    assert observe(w, "g_arr256", bytes(data)) == {"EFFECT-NO-STRAY"}


def test_neighbour_variable_changed(w: W) -> None:
    assert copy(w, name="g_u64", src=PAGEABLE, count=8) == []
    data = bytearray(init("g_arr256"))
    data[0] ^= 0xFF
    assert observe(w, "g_arr256", bytes(data)) == {"EFFECT-NEIGHBOURS"}


def test_each_device_has_its_own_instance(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=16) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16])) == set()
    assert observe(w, "g_arr256", init("g_arr256"), device=1) == set()
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16]), device=1) == {"DEVICE-INSTANCE"}


def test_copy_goes_to_the_current_device(w: W) -> None:
    w.ok("set_device", device_id=1)
    assert copy(w, src=PAGEABLE, count=16, stream=w.foreign_stream) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16]), device=1) == set()
    assert observe(w, "g_arr256", init("g_arr256"), device=0) == set()


def test_threads_have_their_own_current_device(w: W) -> None:
    w.ok("set_device", thread=1, device_id=1)
    assert copy(w, src=PAGEABLE, count=16, stream=0, thread=1) == []
    assert observe(w, "g_arr256", init("g_arr256"), device=0) == set()
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16]), device=1) == set()


def test_rejected_call_writes_nothing(w: W) -> None:
    bad = announce_copy(w, src=PAGEABLE, offset=250)
    assert bad.settle(100000) == []
    w.ok("synchronize_stream", stream=w.stream)
    data = bytearray(init("g_arr256"))
    data[250:256] = PAGE[:6]  # the rejected copy's bytes, clipped into the variable
    assert observe(w, "g_arr256", bytes(data)) == {"HYGIENE-NO-WRITE"}
    assert observe(w, "g_arr256", init("g_arr256")) == set()


def test_rejected_call_that_returned_success(w: W) -> None:
    (v,) = announce_copy(w, kind=2).settle(0)
    assert v.requirement == "KIND-REJECTED"


def test_async_read_sees_what_its_stream_wrote_before(w: W) -> None:
    assert copy(w, count=8) == []
    read_async(w, w.stream)
    assert w.model.ready_reads() == []
    w.ok("synchronize_stream", stream=w.stream)
    (r,) = w.model.ready_reads()
    assert check_read(w.model, r, after("g_arr256", 0, PIN[:8])[:16]) == []
    assert w.model.ready_reads() == []


def test_async_read_that_missed_an_earlier_copy(w: W) -> None:
    assert copy(w, count=8) == []
    read_async(w, w.stream)
    w.ok("synchronize_stream", stream=w.stream)
    (r,) = w.model.ready_reads()
    assert check_read(w.model, r, init("g_arr256")[:16]) != []


def test_async_read_may_see_a_later_copy_of_another_stream(w: W) -> None:
    read_async(w, w.stream)
    assert copy(w, count=8, stream=w.other_stream) == []
    w.ok("synchronize_device")
    (r,) = w.model.ready_reads()
    assert check_read(w.model, r, after("g_arr256", 0, PIN[:8])[:16]) == []


def test_async_read_never_sees_a_later_copy_of_its_own_stream(w: W) -> None:
    read_async(w, w.stream)
    assert copy(w, count=8) == []
    w.ok("synchronize_stream", stream=w.stream)
    (r,) = w.model.ready_reads()
    assert check_read(w.model, r, after("g_arr256", 0, PIN[:8])[:16]) != []
    # and its destination now holds what was read, as a source for later copies
    w.ok("synchronize_device")


def test_sync_read_into_pageable_memory(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=8) == []

    def read() -> Announced:
        """A 16-byte aclrtMemcpyFromSymbol of g_arr256 into pageable memory."""
        return announce(
            w.model,
            "memcpy_from_symbol",
            dst=PAGEABLE + 4096,
            dst_max=16,
            symbol=w.sym["g_arr256"],
            count=16,
            offset=0,
            kind=2,
        )

    assert read().settle(0, observed=after("g_arr256", 0, PAGE[:8])[:16]) == []
    assert reqs(read().settle(0, observed=init("g_arr256")[:16])) == {"PAGEABLE-BLOCKS"}


# --- host memory edge cases -------------------------------------------------------
def test_unwritten_malloc_memory_copies_unspecified_bytes(w: W) -> None:
    w.ok("malloc_pageable", size=64, outputs={"ptr": 0x6100_0000_0000})
    assert copy(w, src=0x6100_0000_0000, count=8) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\x42" * 8)) == set()
    w.ok("write_host", dst=0x6100_0000_0000, data=b"\x01" * 8)
    assert copy(w, src=0x6100_0000_0000, count=8) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\x42" * 8)) != set()


def test_freeing_a_pending_source_makes_its_bytes_unspecified(w: W) -> None:
    assert copy(w, count=8) == []
    w.ok("free_host", host_ptr=PINNED)
    w.ok("synchronize_stream", stream=w.stream)
    assert observe(w, "g_arr256", after("g_arr256", 0, b"\x99" * 8)) == set()


# --- device reset ----------------------------------------------------------------------
def test_contents_after_a_reset_are_unspecified_then_learned(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=16) == []
    w.ok("reset_device", device_id=0)
    assert w.model.world.current_device(0) is None
    assert w.model.world.classify_stream(w.stream).name == "DESTROYED"
    anything = bytes(256)
    assert observe(w, "g_arr256", anything) == set()
    changed = bytearray(anything)
    changed[3] = 1
    assert observe(w, "g_arr256", bytes(changed)) == {"EFFECT-NO-STRAY"}


def test_symbol_address_is_stable_per_device(w: W) -> None:
    s = w.sym["g_u32"]
    assert announce(w.model, "get_symbol_address", symbol=s).settle(0, dev_ptr=0x1000) == []
    assert announce(w.model, "get_symbol_address", symbol=s).settle(0, dev_ptr=0x1000) == []
    assert reqs(announce(w.model, "get_symbol_address", symbol=s).settle(0, dev_ptr=0x2000)) == {
        "GETSYMBOL-ADDRESS"
    }
    w.ok("set_device", device_id=1)
    assert announce(w.model, "get_symbol_address", symbol=s).settle(0, dev_ptr=0x2000) == []


def test_diagnosis_names_the_calls(w: W) -> None:
    assert copy(w, src=PAGEABLE, count=4) == []
    (v,) = observe_now(w.model, 0, "g_arr256", 0, init("g_arr256"))
    text = v.render()
    assert "g_arr256 bytes [0, 4)" in text
    assert (
        "aclrtMemcpyToSymbolAsync(&g_arr256, pageable0, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, stream1)"
        in text
    )
    assert "(complete)" in text and "observed:" in text


def test_bytes_of_several_copies_on_another_device_are_charged_to_the_instance(w: W) -> None:
    """Two copies on device 1, partly overlapping: their bytes together, seen on device 0,
    name the instance, even though neither copy alone explains them."""
    w.ok("set_device", device_id=1)
    assert copy(w, src=PAGEABLE, count=8, stream=0) == []
    assert copy(w, src=PAGEABLE + 100, count=2, offset=6, stream=0) == []
    w.ok("set_device", device_id=0)
    seen = bytearray(init("g_arr256"))
    seen[0:8] = PAGE[0:8]
    seen[6:8] = PAGE[100:102]
    assert observe(w, "g_arr256", bytes(seen)) == {"DEVICE-INSTANCE"}


def test_copies_undone_by_a_reset_of_another_device_are_charged_to_the_instance(w: W) -> None:
    """A copy known complete on device 0, then device 1 reset (its context ended) and set
    again: device 0's variable back at its starting contents is DEVICE-INSTANCE (the reset
    reached device 0's instance), not a copy that did not land; device 1's contents may
    be anything (DEVICE-RESET-CONTENTS)."""
    assert copy(w, src=PAGEABLE, count=16, stream=0) == []
    assert observe(w, "g_arr256", after("g_arr256", 0, PAGE[:16])) == set()
    for _ in range(w.model.device_references(1)):  # the last one ends the context
        w.ok("reset_device", device_id=1)
    w.ok("set_device", device_id=1)
    assert observe(w, "g_arr256", bytes(256), device=1) == set()
    assert observe(w, "g_arr256", init("g_arr256")) == {"DEVICE-INSTANCE"}


def test_a_copy_that_did_not_land_before_any_reset_keeps_its_charge(w: W) -> None:
    """Device 1 reset before the copy on device 0 was issued: the reset explains nothing."""
    for _ in range(w.model.device_references(1)):
        w.ok("reset_device", device_id=1)
    w.ok("set_device", device_id=0)
    assert copy(w, src=PAGEABLE, count=16, stream=0) == []
    assert observe(w, "g_arr256", init("g_arr256")) == {"PAGEABLE-BLOCKS"}
