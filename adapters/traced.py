"""The wrapper the suite talks to a backend through: every call becomes a record.

:class:`Traced` forwards each call of the contract to the adapter it wraps and
appends a :class:`~acl_conformance.reference_impl.record.CallRecord` to its
trace.  Its call methods are not written out one by one: they are made from
the table of calls (``reference_impl/calls.py`` ``CALLS``) and the signatures
of :class:`~.base.Adapter`'s abstract methods when this module is imported, so
adding a call to the contract is adding a row to ``CALLS`` and an abstract
method to ``Adapter`` (this module checks, when imported, that the two agree).
"""

from __future__ import annotations

import abc
import inspect
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from typing import Any
from typing import cast

from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.calls import output_names
from acl_conformance.reference_impl.record import CallRecord

from .base import CONTRACT_CALLS
from .base import Adapter
from .base import Capabilities
from .base import FixtureVariable


def _check_contract() -> None:
    """The contract's call methods and the table of calls describe the same calls, with
    the same parameters in the same order (plus a ``null_<output>`` flag where the
    contract can pass NULL for an out-parameter): fail loudly at import otherwise."""
    methods, table = set(CONTRACT_CALLS), set(CALLS)
    if methods != table:
        raise TypeError(
            "the contract and reference_impl/calls.py CALLS disagree: "
            f"methods of Adapter without a row in CALLS: {sorted(methods - table)}; "
            f"rows of CALLS without a method of Adapter: {sorted(table - methods)}"
        )
    for name in CONTRACT_CALLS:
        spec = CALLS[name]
        flags = {f"null_{o.name}" for o in spec.outputs}
        params = [p for p in inspect.signature(getattr(Adapter, name)).parameters if p != "self"]
        if [p for p in params if p not in flags] != [p.name for p in spec.params]:
            raise TypeError(
                f"Adapter.{name}{tuple(params)} does not take the parameters CALLS lists "
                f"for {spec.c_name}: {tuple(p.name for p in spec.params)}"
            )


_check_contract()


class Traced(Adapter):
    """Wraps an adapter and records every call it makes (thread-safe).

    Construct it with :meth:`around` where the type checker looks (its call methods
    are made at import, which a static checker cannot see); ``Traced(inner)`` works
    the same at run time."""

    def __init__(self, inner: Adapter) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls_may_hang = inner.calls_may_hang
        self.trace: list[CallRecord] = []
        self.lock = threading.Lock()
        """Held while the trace changes."""
        self._acting = threading.local()
        self._references: dict[int, int] = {}

    @classmethod
    def around(cls, inner: Adapter) -> Traced:
        """``inner``, traced."""
        return cls(inner)

    def capabilities(self) -> Capabilities:
        return self.inner.capabilities()

    def fixtures(self) -> list[FixtureVariable]:
        return self.inner.fixtures()

    def invalid_handle(self) -> int:
        return self.inner.invalid_handle()

    def close(self) -> None:
        self.inner.close()

    @contextmanager
    def host_thread(self, number: int) -> Iterator[None]:
        """Calls made inside the block from this OS thread are recorded as made by host
        thread ``number``: the harness numbers host threads (as the model does) and may
        make a thread's calls from a worker OS thread of its own.  Calls made outside
        any such block (start-up and shut-down, outside a harness) are thread 0."""
        before = getattr(self._acting, "number", None)
        self._acting.number = number
        try:
            yield
        finally:
            self._acting.number = before

    def references(self) -> dict[int, int]:
        """Per device: the successful aclrtSetDevice calls made through this wrapper that no
        successful aclrtResetDevice has undone (one reset drops one, as the model has it)."""
        with self.lock:
            return dict(self._references)

    def record(self, name: str, args: Mapping[str, Any]) -> CallRecord:
        """Make ``name(**args)`` on the wrapped adapter; the call's record (what the
        adapter raised is raised again, after it is recorded)."""
        return self._make(name, _arguments(name, self, (), args))[0]

    def _make(self, name: str, args: dict[str, Any]) -> tuple[CallRecord, Any]:
        # Bytes-like arguments are recorded (and passed on) as bytes: a caller's
        # buffer may change after the call, the record must not.
        args = {
            k: bytes(v) if isinstance(v, (bytearray, memoryview)) else v for k, v in args.items()
        }
        number = getattr(self._acting, "number", None)
        rec = CallRecord(0, name, args, thread=0 if number is None else number)
        with self.lock:
            rec.seq = len(self.trace) + 1
            self.trace.append(rec)
        fn = getattr(self.inner, name)
        rec.started = time.monotonic()
        try:
            result = fn(**args)
        except BaseException as exc:
            rec.ended = time.monotonic()
            rec.error = f"{type(exc).__name__}: {exc}"
            raise
        rec.ended = time.monotonic()
        if isinstance(result, tuple):
            rec.code = int(result[0])
            rec.outputs = dict(zip(output_names(name), result[1:], strict=False))
            return rec, result
        rec.code = int(result)
        if rec.code == 0 and name in ("set_device", "reset_device"):
            # The references a later harness's model starts from (``references``).
            device = int(args["device_id"])
            with self.lock:
                n = self._references.get(device, 0) + (1 if name == "set_device" else -1)
                self._references[device] = max(0, n)
        return rec, rec.code


_SIGNATURES = {name: inspect.signature(getattr(Adapter, name)) for name in CALLS}


_PARAMETERS = {
    name: tuple((p.name, p.default) for p in list(sig.parameters.values())[1:])
    for name, sig in _SIGNATURES.items()
}
"""Per call: its parameters after ``self``, in order, with their defaults."""


def _arguments(
    name: str, traced: Traced, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """The arguments of a call by parameter name, defaults included (TypeError if the
    contract's method does not take them)."""
    # The common case without Signature.bind, which costs more than the call itself on
    # the simulator (every call of the suite comes through here).
    params = _PARAMETERS[name]
    out: dict[str, Any] = {}
    taken = 0  # keyword arguments the method takes
    if len(args) <= len(params):
        for i, (param, default) in enumerate(params):
            if i < len(args):
                if param in kwargs:
                    break
                out[param] = args[i]
            elif param in kwargs:
                out[param] = kwargs[param]
                taken += 1
            elif default is not inspect.Parameter.empty:
                out[param] = default
            else:
                break
        else:
            if taken == len(kwargs):  # no keyword the method does not take
                return out
    bound = _SIGNATURES[name].bind(traced, *args, **kwargs)
    bound.apply_defaults()
    out = dict(bound.arguments)
    del out["self"]
    return out


def _forwarder(name: str) -> Callable[..., Any]:
    """``Traced.<name>``: the contract's method, forwarded and recorded (the arguments by
    parameter name, defaults included, as ``CALLS`` names them)."""

    def forward(self: Traced, *args: Any, **kwargs: Any) -> Any:
        return self._make(name, _arguments(name, self, args, kwargs))[1]

    forward.__name__ = name
    forward.__qualname__ = f"Traced.{name}"
    forward.__doc__ = f"{CALLS[name].c_name}, forwarded to the wrapped adapter and recorded."
    forward.__signature__ = _SIGNATURES[name]  # type: ignore[attr-defined]
    return forward


for _name in CALLS:
    setattr(Traced, _name, _forwarder(_name))
# Now that they are there, the class is no longer abstract (for run time; a static
# checker sees the abstract methods only, hence ``Traced.around``).
abc.update_abstractmethods(cast(type, Traced))
