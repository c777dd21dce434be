"""Machine (c): several host threads, each on its own stream and variable, copying at once."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st
from hypothesis.stateful import initialize
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from acl_conformance.conformance.authoring import device_switch
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.failure import Declined
from acl_conformance.conformance.harness.harness import HostBuffer

from .common import HarnessMachine
from .common import declinable

OWN = ("g_u64", "g_struct24", "g_arr256", "g_arr4k")
"""The variable each thread owns: threads share nothing, so every lost or mixed write shows."""
STEP_TIMEOUT = 60.0


@dataclass
class _Host:
    """One host thread of the machine, running the actions it is sent."""

    k: int
    var: str
    inbox: queue.SimpleQueue[Callable[[], None] | None]
    done: queue.SimpleQueue[BaseException | None]
    thread: threading.Thread
    stream: int = 0
    pinned: HostBuffer | None = None
    pageable: HostBuffer | None = None


ACTIONS = ("copy pinned", "copy pageable", "sync", "observe", "mutate", "query")


class ThreadsMachine(HarnessMachine):
    """Each step, every thread does one action at the same moment."""

    def __init__(self) -> None:
        super().__init__()
        self.hosts: list[_Host] = []
        self.switches = 0
        for k, var in enumerate(OWN):
            inbox: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
            done: queue.SimpleQueue[BaseException | None] = queue.SimpleQueue()
            t = threading.Thread(
                target=self._serve, args=(inbox, done), daemon=True, name=f"host-{k}"
            )
            self.hosts.append(_Host(k, var, inbox, done, t))
            t.start()

    @staticmethod
    def _serve(
        inbox: queue.SimpleQueue[Callable[[], None] | None],
        done: queue.SimpleQueue[BaseException | None],
    ) -> None:
        while True:
            job = inbox.get()
            if job is None:
                return
            try:
                job()
                done.put(None)
            except BaseException as exc:  # reported by the step that sent the job
                done.put(exc)

    def teardown(self) -> None:
        for host in self.hosts:
            host.inbox.put(None)
        for host in self.hosts:
            host.thread.join(timeout=STEP_TIMEOUT)
        super().teardown()

    def _everyone(self, jobs: list[Callable[[], None]]) -> None:
        barrier = threading.Barrier(len(jobs))

        def together(job: Callable[[], None]) -> Callable[[], None]:
            def run() -> None:
                barrier.wait(timeout=STEP_TIMEOUT)
                with self.h.unclassified():
                    job()

            return run

        for host, job in zip(self.hosts, jobs, strict=True):
            host.inbox.put(together(job))
        errors = [host.done.get(timeout=STEP_TIMEOUT) for host in self.hosts]
        if not any(errors):
            self.h.passed("CONCURRENCY-THREADS")
        for e in errors:
            if isinstance(e, ConformanceFailure):
                raise self.h.classify(
                    e.under("CONCURRENCY-THREADS", f"with {len(jobs)} host threads calling at once")
                )
            if e is not None and not isinstance(e, Declined):  # a declined action: skipped
                raise e

    @initialize()
    def set_up_threads(self) -> None:
        self.h.baseline(*OWN)

        def setup(host: _Host) -> Callable[[], None]:
            def run() -> None:
                self.h.call("set_device", device_id=0)
                n = ops.size(self.h, host.var)
                host.stream = self.h.stream()
                host.pinned = self.h.pinned(n, ops.pattern(500 + host.k, n))
                host.pageable = self.h.pageable(n, ops.pattern(600 + host.k, n))

            return run

        self._everyone([setup(host) for host in self.hosts])

    @rule(
        actions=st.lists(st.sampled_from(ACTIONS), min_size=len(OWN), max_size=len(OWN)),
        data=st.data(),
    )
    @declinable
    def step(self, actions: list[str], data: st.DataObject) -> None:
        tags = [self.tag + 1 + k for k in range(len(self.hosts))]
        self.tag += len(self.hosts)
        jobs = []
        for host, action, tag in zip(self.hosts, actions, tags, strict=True):
            jobs.append(self._job(host, action, tag))
        self._everyone(jobs)

    def _job(self, host: _Host, action: str, tag: int) -> Callable[[], None]:
        h = self.h
        n = ops.size(h, host.var)

        def run() -> None:
            assert host.pinned is not None and host.pageable is not None
            if action in ("copy pinned", "copy pageable"):
                buf = host.pinned if action == "copy pinned" else host.pageable
                h.write(buf, 0, ops.pattern(tag, n))
                ops.to_symbol_async(h, host.var, buf, count=n, stream=host.stream)
            elif action == "sync":
                ops.sync(h, host.stream)
            elif action == "observe":
                h.observe(host.var)
            elif action == "mutate":
                h.write(host.pinned, 0, ops.pattern(tag, n))
            else:
                h.call("stream_query", stream=host.stream)

        return run

    @precondition(
        lambda self: self.h.caps.devices >= 2 and self.h.caps.default_stream and self.switches < 1
    )
    @rule()
    @declinable
    def two_devices_at_once(self) -> None:
        """At the same moment, host 0 switches to device 1 and back to 0 while host 1 stays
        on device 0, each using the NULL stream (device_switch.py): the current device is
        per host thread, so neither sees the other's choice.  The other hosts query."""
        if not self.h.null_stream_usable:
            return
        if self.switches == 0:
            self.h.baseline(self.hosts[0].var, device=1)
        self.switches += 1
        tags = [self.tag + 1, self.tag + 2]
        self.tag += 2
        h = self.h

        def on(host: _Host, device: int, tag: int) -> Callable[[], None]:
            return lambda: device_switch.with_device(h, device, host.var, tag, back_to=0)

        jobs = [on(self.hosts[0], 1, tags[0]), on(self.hosts[1], 0, tags[1])]
        jobs += [self._job(host, "query", 0) for host in self.hosts[2:]]
        self._everyone(jobs)
