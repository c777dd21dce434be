"""The two Hypothesis internals the suite relies on (``conformance/session/settings.py``, the only
module that touches them), checked for what the suite assumes of them: a Hypothesis
release that renames or changes either fails here, loudly, instead of the suite quietly
shrinking for five minutes or shrinking an expected failure."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from acl_conformance.conformance.session import settings as suite_settings

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("conformance", "adapters", "reports", "reference_impl")


def _failing_test(calls: list[list[int]], **kw: object) -> object:
    """A @given test that fails on every list summing to more than 1000 (the smallest such
    list is ``[1001]``); it notes every list it is called with in ``calls``."""

    @settings(database=None, derandomize=True, max_examples=200, deadline=None, **kw)  # type: ignore[arg-type]
    @given(st.lists(st.integers(0, 10**6), min_size=1))
    def test(xs: list[int]) -> None:
        calls.append(list(xs))
        if sum(xs) > 1000:
            raise AssertionError(xs)

    return test


def _reported(test: object) -> list[int]:
    """The failing example Hypothesis reports for ``test``."""
    with pytest.raises(AssertionError) as info:
        test()  # type: ignore[operator]
    reported: list[int] = info.value.args[0]
    return reported


def test_the_engine_still_reads_its_shrinking_time_limit_from_the_module() -> None:
    """``settings.limit_shrinking`` sets ``engine.MAX_SHRINKING_SECONDS``: it must still be
    a number the engine reads when it starts shrinking (at 0 s it stops at once, with the
    failure as found; with the default it shrinks to the smallest)."""
    from hypothesis.internal.conjecture import engine

    default = engine.MAX_SHRINKING_SECONDS
    assert isinstance(default, (int, float)) and default > 0
    try:
        suite_settings.limit_shrinking(0)
        assert engine.MAX_SHRINKING_SECONDS == 0
        unshrunk = _reported(_failing_test([]))
    finally:
        suite_settings.limit_shrinking(default)
    assert default == engine.MAX_SHRINKING_SECONDS
    assert unshrunk != [1001] and sum(unshrunk) > 1000
    assert _reported(_failing_test([])) == [1001]


def test_a_given_test_s_settings_can_still_be_swapped_for_one_run() -> None:
    """``settings.without_shrinking`` swaps the settings Hypothesis keeps on a @given test:
    they must still be read when the test runs (not copied when it was decorated), and the
    swap undone restores the shrink phase."""
    calls: list[list[int]] = []
    test = _failing_test(calls)
    undo = suite_settings.without_shrinking(test)
    assert undo is not None
    found = _reported(test)
    first = next(i for i, c in enumerate(calls) if sum(c) > 1000)
    assert found == calls[first] and found != [1001]  # the failure as first found
    assert len(calls) - first <= 3  # no shrinking: the failing example is replayed
    undo()
    assert _reported(test) == [1001]
    assert suite_settings.without_shrinking(lambda: None) is None  # not a @given test


def test_no_other_module_touches_hypothesis_internals() -> None:
    """``settings.py`` is the one place: no other shipped module imports from
    ``hypothesis.internal`` or names a private ``_hypothesis`` attribute."""
    offenders = []
    for top in SHIPPED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "conformance/session/settings.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.Attribute):
                    names = [node.attr]
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    names = [node.value]
                for name in names:
                    if name.startswith(("hypothesis.internal", "_hypothesis")):
                        offenders.append(f"{rel}:{getattr(node, 'lineno', '?')}: {name}")
    assert not offenders
