"""Adapter resolution: ``sim``, ``module:attribute`` and the entry-point group, and every failure."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.registry import ENTRY_POINT_GROUP
from acl_conformance.adapters.registry import AdapterResolutionError
from acl_conformance.adapters.registry import available
from acl_conformance.adapters.registry import resolve
from acl_conformance.adapters.simulator import Simulator

MODULE_SOURCE = """
from acl_conformance.adapters.simulator import Simulator


class Mine(Simulator):
    name = "mine"


class NotAnAdapter:
    pass


class Holder:
    @staticmethod
    def make(**options):
        return Simulator.from_options(options)


def factory(**options):
    return Simulator.from_options(options)


def wrong_product(**options):
    return "not an adapter"


def raising(**options):
    raise RuntimeError("no device here\\nsecond line")


instance = Simulator(devices=1)
number = 42
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh importable module holding adapters of every kind; its name."""
    name = f"acl_test_adapters_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(MODULE_SOURCE)
    (tmp_path / f"{name}_broken.py").write_text("raise ValueError('broken\\nat import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    loaded = sys.modules.pop(name, None)
    if loaded is not None:
        loaded.instance.close()
    sys.modules.pop(f"{name}_broken", None)


@pytest.fixture
def entry_points(tmp_path: Path, module: str) -> str:
    """A distribution on sys.path that declares adapters in the group; the module name."""
    dist = tmp_path / "acl_fake_backend-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acl-fake-backend\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent(
            f"""\
            [{ENTRY_POINT_GROUP}]
            fake = {module}:factory
            fakeclass = {module}:Mine
            broken = no_such_module_for_acl_tests:thing
            wrongkind = {module}:number
            """
        )
    )
    return module


def resolved(name: str, options: dict[str, str] | None = None) -> Adapter:
    adapter = resolve(name, options)
    assert isinstance(adapter, Adapter)
    return adapter


def failure(name: str, options: dict[str, str] | None = None) -> str:
    with pytest.raises(AdapterResolutionError) as info:
        resolve(name, options)
    message = str(info.value)
    assert "\n" not in message and message.strip() == message
    assert message.startswith(f"adapter {name!r}: ")
    assert "available: sim" in message  # what is available, in the same line
    return message


# -- what resolves ----------------------------------------------------------------------------
def test_sim_is_built_in() -> None:
    adapter = resolved("sim")
    try:
        assert isinstance(adapter, Simulator)
        assert adapter.options.devices == 2 and adapter.options.schedule == "eager"
    finally:
        adapter.close()


def test_sim_takes_string_options() -> None:
    adapter = resolved("sim", {"devices": "3", "schedule": "random", "seed": "4"})
    try:
        assert isinstance(adapter, Simulator)
        assert adapter.capabilities().devices == 3
        assert adapter.options.schedule == "random" and adapter.options.seed == 4
    finally:
        adapter.close()


def test_module_attribute_class_with_keyword_options() -> None:
    adapter = resolved("acl_conformance.adapters.simulator:Simulator", {"devices": "1"})
    try:
        assert isinstance(adapter, Simulator) and adapter.get_device_count() == (0, 1)
    finally:
        adapter.close()


@pytest.mark.parametrize("attribute", ["factory", "Mine", "Holder.make"])
def test_module_attribute_factory_class_and_nested(module: str, attribute: str) -> None:
    adapter = resolved(f"{module}:{attribute}", {"pinned_read": "call"})
    try:
        assert isinstance(adapter, Simulator) and adapter.options.pinned_read == "call"
    finally:
        adapter.close()


def test_module_attribute_instance(module: str) -> None:
    adapter = resolved(f"{module}:instance")
    assert adapter is sys.modules[module].instance


def test_entry_points(entry_points: str) -> None:
    names = available()
    assert names[0] == "sim"
    assert {"fake", "fakeclass", "broken", "wrongkind"} <= set(names)
    assert names[1:] == sorted(names[1:])
    for name in ("fake", "fakeclass"):
        adapter = resolved(name, {"devices": "1"})
        try:
            assert adapter.get_device_count() == (0, 1)
        finally:
            adapter.close()


def test_available_without_extras_starts_with_sim() -> None:
    assert available()[0] == "sim"


# -- what fails, one line each -----------------------------------------------------------------
def test_unknown_name(entry_points: str) -> None:
    message = failure("nonesuch")
    assert "unknown" in message and ENTRY_POINT_GROUP in message
    assert "fake" in message  # the entry points are listed as available


def test_bad_sim_options() -> None:
    assert "unknown simulator option 'bogus'" in failure("sim", {"bogus": "1"})
    assert "devices='many'" in failure("sim", {"devices": "many"})
    assert "schedule='soon'" in failure("sim", {"schedule": "soon"})


def test_module_that_does_not_exist() -> None:
    message = failure("no_such_module_for_acl_tests:thing")
    assert "cannot import module 'no_such_module_for_acl_tests'" in message
    assert "ModuleNotFoundError" in message


def test_module_that_fails_on_import(module: str) -> None:
    message = failure(f"{module}_broken:x")
    assert "ValueError: broken at import" in message


def test_attribute_missing(module: str) -> None:
    assert f"module {module!r} has no attribute 'missing'" in failure(f"{module}:missing")
    assert "has no attribute 'Holder.nothing'" in failure(f"{module}:Holder.nothing")


@pytest.mark.parametrize("name", [":factory", "acl_conformance.adapters.simulator:", ":"])
def test_malformed_module_attribute(name: str) -> None:
    assert "module:attribute" in failure(name)


def test_object_of_the_wrong_kind(module: str) -> None:
    assert "is a int" in failure(f"{module}:number")
    assert "class NotAnAdapter, not an Adapter class" in failure(f"{module}:NotAnAdapter")
    assert "returned a str" in failure(f"{module}:wrong_product")


def test_factory_that_raises(module: str) -> None:
    message = failure(f"{module}:raising", {"devices": "2"})
    assert "raising(devices='2') raised RuntimeError: no device here second line" in message


def test_class_that_rejects_the_options() -> None:
    message = failure("acl_conformance.adapters.simulator:Simulator", {"bogus": "1"})
    assert "raised TypeError" in message


def test_instance_given_options(module: str) -> None:
    assert "takes no options" in failure(f"{module}:instance", {"devices": "1"})


def test_broken_entry_points(entry_points: str) -> None:
    message = failure("broken")
    assert "entry point 'no_such_module_for_acl_tests:thing' failed to load" in message
    assert "ModuleNotFoundError" in message
    assert "is a int" in failure("wrongkind")


def test_the_error_type() -> None:
    assert issubclass(AdapterResolutionError, Exception)
    err = AdapterResolutionError("two\nlines  and   spaces")
    assert str(err) == "two lines and spaces"
