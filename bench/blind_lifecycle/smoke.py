"""Smoke: every backend constructs; a few calls per bug class behave as intended."""
import threading, time
from blind23.backends import make, BACKENDS
from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED

H2D, D2H = 1, 2
res = {}

def sim(name):
    a = make(name)
    return a

def var(a, i=5):
    return a.fixtures()[i]

def pageable_copy_blocks(a, ptr, v):
    """Copy from ptr behind a closed gate on a new stream: True if the call blocked."""
    _, s = a.create_stream()
    _, g = a.launch_gate(s)
    done = []
    t = threading.Thread(target=lambda: (a.set_device(0), done.append(a.memcpy_to_symbol_async(v.address, ptr, 4, 0, H2D, s))))
    t.start(); t.join(0.2)
    blocked = t.is_alive()
    a.open_gate(g); t.join(); a.synchronize_stream(s); a.destroy_stream(s)
    return blocked

def reg_case(name):
    a = sim(name); a.set_device(0); v = var(a)
    _, A = a.malloc_pageable(8192); _, B = a.malloc_pageable(8192)
    r = [a.host_register(A, 8192), a.host_register(B, 8192)]
    pageable_copy_blocks(a, A, v)  # warm any cache with A
    r.append(a.host_unregister(A))
    blocked_A = pageable_copy_blocks(a, A, v)
    blocked_B = pageable_copy_blocks(a, B, v)
    r.append(a.host_register(A + 4096, 4096))
    a.close()
    return dict(codes=r, A_after_unreg_blocks=blocked_A, B_registered_blocks=blocked_B)

for n in ["legal_address_reuse", "reg_unregister_pops_latest", "reg_stale_hit_cache", "reg_reregister_shifted"]:
    res[n] = reg_case(n)

def reset_case(name):
    a = sim(name); v = var(a)
    a.set_device(1); a.set_device(0)
    _, p = a.malloc_host(v.size); a.write_host(p, b"\x11" * v.size)
    a.memcpy_to_symbol(v.address, p, v.size, 0, H2D)
    r = a.reset_device(1)
    code_get = a.get_device()
    _, q = a.malloc_host(v.size)
    c = a.memcpy_from_symbol(q, v.size, v.address, v.size, 0, D2H)
    data = a.read_host(q, 4)[1]
    a.set_device(1); a.set_device(1)
    c1 = a.memcpy_from_symbol(q, v.size, v.address, 4, 0, D2H)
    d1 = a.read_host(q, 4)[1]
    a.close()
    return dict(reset=r, get_device=code_get, dev0_read=(c, data.hex()), dev1_after_reset=(c1, d1.hex()))

for n in ["legal_reset_poison", "legal_reset_keeps_contents", "reset_reimages_current", "reset_drops_current"]:
    res[n] = reset_case(n)

def event_case(name):
    a = sim(name); a.set_device(0); v = var(a)
    _, s1 = a.create_stream(); _, s2 = a.create_stream(); _, e = a.create_event()
    _, px = a.malloc_host(4); a.write_host(px, b"XXXX")
    _, py = a.malloc_host(4); a.write_host(py, b"YYYY")
    a.record_event(e, s1); a.synchronize_stream(s1)
    _, g = a.launch_gate(s1)
    a.memcpy_to_symbol_async(v.address, px, 4, 0, H2D, s1)
    a.record_event(e, s1)                 # second record, behind the gate
    a.stream_wait_event(s2, e)
    a.memcpy_to_symbol_async(v.address, py, 4, 0, H2D, s2)
    time.sleep(0.05); a.open_gate(g); a.synchronize_stream(s1); a.synchronize_stream(s2)
    _, q = a.malloc_host(4); a.memcpy_from_symbol(q, 4, v.address, 4, 0, D2H)
    final = a.read_host(q, 4)[1]
    # record on a stream, then destroy it
    _, s3 = a.create_stream(); _, e2 = a.create_event(); a.record_event(e2, s3); a.destroy_stream(s3)
    w = a.stream_wait_event(s2, e2); se = a.synchronize_event(e2)
    # re-record while an earlier wait is pending
    _, g1 = a.launch_gate(s1); a.record_event(e, s1); a.stream_wait_event(s2, e); time.sleep(0.02)
    _, s4 = a.create_stream(); _, g2 = a.launch_gate(s4); a.record_event(e, s4)
    a.open_gate(g1)
    rc = a.synchronize_stream_with_timeout(s2, 200)
    a.open_gate(g2); a.synchronize_stream(s2)
    a.close()
    return dict(final=final, wait_destroyed=w, sync_event_destroyed=se, pending_wait_sync200=rc)

for n in ["legal_slow_pageable", "event_first_record_wins", "event_record_stream_revalidated", "event_wait_follows_rerecord"]:
    res[n] = event_case(n)

def switch_case(name):
    a = sim(name); v = var(a)
    a.set_device(0); a.synchronize_stream(0); a.set_device(1); gd = a.get_device()
    _, p = a.malloc_host(4); a.write_host(p, b"\x22" * 4)
    null_pinned = a.memcpy_to_symbol_async(v.address, p, 4, 0, H2D, 0); a.synchronize_stream(0)
    a.set_device(0)
    out = {}
    def th(dev, byte):
        a.set_device(dev); time.sleep(0.05)
        _, q = a.malloc_host(4); a.write_host(q, bytes([byte]) * 4)
        a.memcpy_to_symbol(v.address, q, 4, 0, H2D)
        out[dev] = a.get_device()
    ts = [threading.Thread(target=th, args=(d, 0x30 + d)) for d in (0, 1)]
    [t.start() for t in ts]; [t.join() for t in ts]
    reads = {}
    for d in (0, 1):
        a.set_device(d); _, q = a.malloc_host(4); a.memcpy_from_symbol(q, 4, v.address, 4, 0, D2H)
        reads[d] = a.read_host(q, 4)[1].hex()
    a.close()
    return dict(get_device_after_0to1=gd, null_pinned_after_switch=null_pinned, thread_get_device=out, reads=reads)

for n in ["current_device_process_global", "get_device_first_set", "null_stream_sticky_device"]:
    res[n] = switch_case(n)

def timeout_case(name):
    a = sim(name); a.set_device(0)
    _, s = a.create_stream()
    idle = {t: a.synchronize_stream_with_timeout(s, t) for t in (-1, 0, 10)}
    _, g = a.launch_gate(s)
    t0 = time.monotonic(); busy10 = a.synchronize_stream_with_timeout(s, 10); dt = time.monotonic() - t0
    busy0 = a.synchronize_stream_with_timeout(s, 0)
    threading.Timer(0.1, a.open_gate, args=(g,)).start()
    busym1 = a.synchronize_stream_with_timeout(s, -1)
    a.synchronize_stream(s); a.close()
    return dict(idle=idle, busy10=(busy10, round(dt * 1000)), busy0=busy0, busy_minus1=busym1)

for n in ["legal_timeout_late", "timeout_zero_polls", "timeout_forever_as_ms", "timeout_expiry_succeeds"]:
    res[n] = timeout_case(n)

def from_case(name):
    a = sim(name); a.set_device(0); v = var(a)
    _, q = a.malloc_host(64)
    return dict(eq=a.memcpy_from_symbol(q, 4, v.address, 4, 0, D2H),
                gt=a.memcpy_from_symbol(q, 3, v.address, 4, 0, D2H),
                zero=a.memcpy_from_symbol(q, 0, v.address, 4, 0, D2H),
                eq_off=a.memcpy_from_symbol(q, 4, v.address, 4, 2, D2H),
                async_eq=a.memcpy_from_symbol_async(q, 4, v.address, 4, 0, D2H, 0))

for n in ["from_dstmax_off_by_one", "from_dstmax_zero_unbounded", "from_dstmax_counts_offset"]:
    res[n] = from_case(n)

def order_case(name):
    a = sim(name); a.set_device(0); v = var(a)
    _, p = a.malloc_host(8); bad = a.invalid_handle()
    return dict(badsym_badstream=a.memcpy_to_symbol_async(v.address + 1, p, 4, 0, H2D, bad),
                badsym_badkind=a.memcpy_to_symbol_async(v.address + 1, p, 4, 0, 7, 0),
                ok=a.memcpy_to_symbol_async(v.address, p, 4, 0, H2D, 0))

for n in ["order_stream_first", "order_lookup_before_kind"]:
    res[n] = order_case(n)

ref = {}
import blind23.backends as B
B.BACKENDS["_reference"] = B.Simulator
for f, names in [(reg_case, 1), (reset_case, 1), (event_case, 1), (switch_case, 1), (timeout_case, 1), (from_case, 1), (order_case, 1)]:
    ref[f.__name__] = f("_reference")
for k, v in ref.items():
    print(f"REFERENCE {k}: {v}")
for k, v in res.items():
    print(f"{k}: {v}")
missing = set(BACKENDS) - set(res) - {"_reference"}
print("not exercised:", missing)
