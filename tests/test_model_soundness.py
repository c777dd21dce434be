"""Soundness: the model accepts whatever a legal schedule produces.

Random histories over 1-3 streams, with events, gates, synchronisations,
pinned, pageable and registered sources and host mutation inside pending
windows, are run by the legal executor under a random legal schedule; every
return code, status and byte it reports must be accepted by the model.
"""

from __future__ import annotations

from histories import histories
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from legal_executor import run_history


@settings(max_examples=250, deadline=None)
@given(
    history=histories(), seed=st.integers(0, 2**32 - 1), profile=st.sampled_from(["spec", "cann"])
)
def test_model_accepts_every_legal_schedule(
    history: tuple[int, list], seed: int, profile: str
) -> None:
    streams, ops = history
    run = run_history(ops, seed, streams, profile)
    assert not run.violations, "\n".join(v.render() for v in run.violations)


@settings(max_examples=60, deadline=None)
@given(
    history=histories(max_ops=12),
    seeds=st.lists(st.integers(0, 2**32 - 1), min_size=4, max_size=4, unique=True),
)
def test_one_history_many_schedules(history: tuple[int, list], seeds: list[int]) -> None:
    """The same history under several schedules: all accepted, whatever each produced."""
    streams, ops = history
    for seed in seeds:
        run = run_history(ops, seed, streams, "spec", wander=6)
        assert not run.violations, "\n".join(v.render() for v in run.violations)
