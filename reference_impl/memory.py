"""The contents of one device variable, as the set of values each byte may hold.

For each (device, variable) the model keeps a *segment map*: the variable's
bytes cut into ranges, each with the tuple of *candidates* that may explain
its bytes: the initial contents, or a write that may have happened and is not
yet known to be overwritten.  Cost grows with the number of writes and cuts,
never with the variable's size: untouched bytes stay one segment, and
observed bytes are compared a range at a time with NumPy.

Judgement is per byte (copies are not atomic): an observed byte is legal when
some visible candidate of its segment has that value there.  A pinned write's
value at a byte is a set: its source bytes at the call plus every value the
host wrote there while the copy was pending (``alternatives``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field

import numpy as np
import numpy.typing as npt

from .judgement import Judgement
from .order import Task

Bytes = npt.NDArray[np.uint8]


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


INITIAL = _Sentinel("the initial contents")
"""What the variable held before any write the model knows of."""

UNKNOWN = _Sentinel("unspecified contents")
"""Any byte value is legal (after a device reset, or a copy from memory the suite
does not know)."""


@dataclass(eq=False)
class Write:
    """One successful copy into a variable, as the model knows it."""

    wid: int
    call: Judgement
    """The call that made it."""
    task: Task
    offset: int
    count: int
    base: Bytes | None
    """The source bytes at the call; None when they are unknown (any value)."""
    mode: str
    """'pinned', 'pageable' or 'sync'."""
    alternatives: list[tuple[int, Bytes]] = field(default_factory=list)
    """(variable offset, bytes): values the source held later while the copy was pending."""

    @property
    def end(self) -> int:
        return self.offset + self.count

    def value(self, lo: int, hi: int) -> Bytes | None:
        """The bytes this write leaves at [lo, hi) (at the call), or None for any value."""
        if self.base is None:
            return None
        return self.base[lo - self.offset : hi - self.offset]


Candidate = Write | _Sentinel


SUMMARY_RUNS = 8
"""A segment of a read with more runs of wrong bytes than this gives one mismatch that
covers them all (``Mismatch.wrong`` says which bytes), not one per run: a large read
with scattered wrong bytes is judged, diagnosed and reported once, in memory bounded
by the bytes read."""


@dataclass
class Mismatch:
    """Observed bytes that no visible candidate explains: one run of them, or (``wrong``
    set) the runs of one segment, between the first wrong byte and the end of the last."""

    lo: int
    hi: int
    observed: bytes
    """What was read at [lo, hi) (the bytes between the runs as well)."""
    candidates: list[Candidate]
    """The candidates that were allowed over this range."""
    blocked: list[Write]
    """Writes covering the range that could not have run yet (behind a closed gate)."""
    wrong: npt.NDArray[np.bool_] | None = None
    """Over [lo, hi): True at the bytes no candidate explains; None when every byte is
    (one run)."""

    def explained(self, mask: npt.NDArray[np.bool_]) -> bool:
        """Does ``mask`` (over [lo, hi), True where a story explains the byte) cover every
        wrong byte?"""
        return bool(mask.all() if self.wrong is None else mask[self.wrong].all())

    def runs(self) -> list[tuple[int, int]]:
        """[start, end) of every run of wrong bytes, as variable offsets."""
        if self.wrong is None:
            return [(self.lo, self.hi)]
        return [(self.lo + a, self.lo + b) for a, b in _false_runs(~self.wrong)]

    @property
    def wrong_count(self) -> int:
        """How many bytes are wrong."""
        return self.hi - self.lo if self.wrong is None else int(np.count_nonzero(self.wrong))


class VarMemory:
    """The segment map of one variable on one device."""

    def __init__(self, size: int, initial: Bytes) -> None:
        if len(initial) != size:
            raise ValueError(f"initial contents have {len(initial)} bytes, the variable {size}")
        self.size = size
        self.initial = initial
        self._starts: list[int] = [0]
        self._cands: list[tuple[Candidate, ...]] = [(INITIAL,)]
        self.retired: deque[Write] = deque(maxlen=32)
        """The most recent writes known to be overwritten, kept for diagnoses only."""
        self.writes = 0

    # -- structure --------------------------------------------------------
    def segments(
        self, lo: int = 0, hi: int | None = None
    ) -> Iterator[tuple[int, int, tuple[Candidate, ...]]]:
        """(start, end, candidates) of every segment meeting [lo, hi), clipped to it."""
        hi = self.size if hi is None else hi
        i = max(bisect_right(self._starts, lo) - 1, 0)
        n = len(self._starts)
        while i < n:
            a = self._starts[i]
            if a >= hi:
                break
            b = self._starts[i + 1] if i + 1 < n else self.size
            yield max(a, lo), min(b, hi), self._cands[i]
            i += 1

    def segment_count(self) -> int:
        return len(self._starts)

    def _split(self, pos: int) -> int:
        """Cut at ``pos``; the index of the segment that starts there."""
        if pos >= self.size:
            return len(self._starts)
        i = bisect_right(self._starts, pos) - 1
        if self._starts[i] == pos:
            return i
        self._starts.insert(i + 1, pos)
        self._cands.insert(i + 1, self._cands[i])
        return i + 1

    def _merge(self, i_lo: int, i_hi: int) -> None:
        """Join neighbours with the same candidates in segments [i_lo - 1, i_hi]."""
        i = min(max(i_hi, 1), len(self._starts) - 1)
        stop = max(i_lo, 1)
        while i >= stop:
            if self._cands[i] == self._cands[i - 1]:
                del self._starts[i]
                del self._cands[i]
            i -= 1

    # -- changes ----------------------------------------------------------
    def add(self, write: Write) -> None:
        """A successful copy: it may explain its range from now on."""
        if write.count == 0:
            return
        i = self._split(write.offset)
        j = self._split(write.end)
        for k in range(i, j):
            self._cands[k] = (*self._cands[k], write)
        self.writes += 1

    def prune(self, lo: int, hi: int, is_done: Callable[[Write], bool]) -> None:
        """Drop what a done write in [lo, hi) hides.

        A done write hides the initial contents and every write that happens
        before it, on the bytes it covers.  Called when writes become done.
        """
        if lo >= hi:
            return
        i = self._split(lo)
        j = self._split(hi)
        for k in range(i, j):
            cands = self._cands[k]
            done = [c for c in cands if isinstance(c, Write) and is_done(c)]
            if not done:
                continue
            keep: list[Candidate] = []
            for c in cands:
                if not isinstance(c, Write):
                    continue
                if any(c.task.happens_before(d.task) for d in done):
                    if c not in self.retired:
                        self.retired.append(c)
                    continue
                keep.append(c)
            self._cands[k] = tuple(keep)
        self._merge(i, j)

    @classmethod
    def from_segments(
        cls, size: int, initial: Bytes, segments: list[tuple[int, int, tuple[Candidate, ...]]]
    ) -> VarMemory:
        """A map holding ``segments`` (a snapshot) and unknown contents elsewhere."""
        vm = cls(size, initial)
        starts: list[int] = []
        cands: list[tuple[Candidate, ...]] = []
        pos = 0
        for a, b, cs in segments:
            if a > pos:
                starts.append(pos)
                cands.append((UNKNOWN,))
            starts.append(a)
            cands.append(cs)
            pos = b
        if pos < size:
            starts.append(pos)
            cands.append((UNKNOWN,))
        vm._starts, vm._cands = starts, cands
        return vm

    def forget(self, contents: Bytes | None) -> None:
        """Start over: known ``contents``, or unknown (UNKNOWN) if None."""
        self._starts = [0]
        if contents is None:
            self._cands = [(UNKNOWN,)]
        else:
            self.initial = contents
            self._cands = [(INITIAL,)]

    def resync(self, lo: int, observed: Bytes) -> None:
        """What was read at [lo, lo + len(observed)) is what the bytes hold now: it replaces
        the initial contents there, and every write stays a candidate (a backend that broke
        a requirement already known to fail may also have broken what the model knew of
        completion: a write believed complete may still land).  Weaker, never unsound."""
        hi = lo + len(observed)
        if lo >= hi:
            return
        if not self.initial.flags.writeable:
            self.initial = self.initial.copy()
        self.initial[lo:hi] = observed
        i = self._split(lo)
        j = self._split(hi)
        for k in range(i, j):
            writes = tuple(c for c in self._cands[k] if isinstance(c, Write))
            self._cands[k] = (INITIAL, *writes)
        self._merge(i, j)

    # -- judgement --------------------------------------------------------
    def check(
        self,
        lo: int,
        observed: Bytes,
        visible: Callable[[Write], bool],
        segments: list[tuple[int, int, tuple[Candidate, ...]]] | None = None,
    ) -> list[Mismatch]:
        """Every run of ``observed`` (read at [lo, lo + len)) that no candidate explains.

        ``visible(w)`` says whether write ``w`` could have run by the time of
        the read; ``segments`` replaces the current map (for reads judged
        against an earlier snapshot).
        """
        hi = lo + len(observed)
        out: list[Mismatch] = []
        segs = self.segments(lo, hi) if segments is None else segments
        for a, b, cands in segs:
            obs = observed[a - lo : b - lo]
            allowed: list[Candidate] = []
            blocked: list[Write] = []
            for c in cands:
                if isinstance(c, Write) and not visible(c):
                    blocked.append(c)
                else:
                    allowed.append(c)
            if self._explains_whole(a, b, obs, allowed):
                continue
            mask = np.zeros(b - a, dtype=bool)
            for c in allowed:
                self.mark(c, a, b, obs, mask)
            if mask.all():
                continue
            runs = _false_runs(mask)
            if len(runs) > SUMMARY_RUNS:
                first, last = runs[0][0], runs[-1][1]
                out.append(
                    Mismatch(
                        a + first,
                        a + last,
                        bytes(obs[first:last]),
                        allowed,
                        blocked,
                        ~mask[first:last],
                    )
                )
                continue
            for r_lo, r_hi in runs:
                out.append(
                    Mismatch(
                        a + r_lo,
                        a + r_hi,
                        bytes(obs[r_lo:r_hi]),
                        allowed,
                        blocked,
                    )
                )
        return _coalesce(out)

    def value_of(self, c: Candidate, a: int, b: int) -> Bytes | None:
        if c is INITIAL:
            return self.initial[a:b]
        if isinstance(c, Write):
            return c.value(a, b)
        return None  # UNKNOWN

    def _explains_whole(self, a: int, b: int, obs: Bytes, allowed: list[Candidate]) -> bool:
        # The common case: one candidate explains the whole segment.  Comparing
        # raw bytes is a memcmp, so large untouched ranges cost little.
        data = obs.tobytes() if len(allowed) > 1 else None
        for c in allowed:
            v = self.value_of(c, a, b)
            if v is None:
                return True
            if data is not None:
                if v.tobytes() == data:
                    return True
            elif np.array_equal(v, obs):
                return True
        return False

    def mark(self, c: Candidate, a: int, b: int, obs: Bytes, mask: npt.NDArray[np.bool_]) -> None:
        v = self.value_of(c, a, b)
        if v is None:
            mask[:] = True
            return
        mask |= v == obs
        if isinstance(c, Write):
            for alt_lo, alt in c.alternatives:
                x, y = max(a, alt_lo), min(b, alt_lo + len(alt))
                if x < y:
                    mask[x - a : y - a] |= alt[x - alt_lo : y - alt_lo] == obs[x - a : y - a]

    def allowed(
        self, lo: int, hi: int, visible: Callable[[Write], bool], distinct: bool = True
    ) -> list[tuple[int, int, list[Bytes] | None]]:
        """What a read of [lo, hi) may see, per segment: (start, end, values), where a byte
        is allowed when some array of ``values`` has it at that position (None: any byte).
        The same judgement as ``check``, spelled out (for reproducers written elsewhere).
        ``distinct=False`` leaves equal arrays in (``distinct_values`` removes them later:
        the model keeps every read's answer, and only a reproducer asks for it)."""
        out: list[tuple[int, int, list[Bytes] | None]] = []
        for a, b, cands in self.segments(lo, hi):
            values: list[Bytes] | None = []
            for c in cands:
                if isinstance(c, Write) and not visible(c):
                    continue
                v = self.value_of(c, a, b)
                if v is None:
                    values = None
                    break
                assert values is not None
                values.append(v)
                if isinstance(c, Write):
                    for alt_lo, alt in c.alternatives:
                        x, y = max(a, alt_lo), min(b, alt_lo + len(alt))
                        if x < y:
                            # Base bytes elsewhere: they are allowed anyway, so the array
                            # adds exactly the alternative's values.
                            arr = v.copy()
                            arr[x - a : y - a] = alt[x - alt_lo : y - alt_lo]
                            values.append(arr)
            out.append((a, b, distinct_values(values) if distinct else values))
        return out

    def snapshot(self, lo: int, hi: int) -> list[tuple[int, int, tuple[Candidate, ...]]]:
        """The segments over [lo, hi) as they are now (for asynchronous reads)."""
        return list(self.segments(lo, hi))


def _false_runs(mask: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    """[start, end) of every run of False in ``mask``."""
    bad = np.concatenate(([False], ~mask, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(bad))
    return [(int(edges[k]), int(edges[k + 1])) for k in range(0, len(edges), 2)]


def _coalesce(runs: list[Mismatch]) -> list[Mismatch]:
    """Join runs that touch and have the same candidates (and the blocked writes of both)."""
    out: list[Mismatch] = []
    for m in runs:
        if out and out[-1].hi == m.lo and out[-1].candidates == m.candidates:
            prev = out[-1]
            blocked = [
                *prev.blocked,
                *(w for w in m.blocked if all(w is not x for x in prev.blocked)),
            ]
            wrong = None
            if prev.wrong is not None or m.wrong is not None:
                wrong = np.concatenate((_wrong_mask(prev), _wrong_mask(m)))
            out[-1] = Mismatch(
                prev.lo, m.hi, prev.observed + m.observed, prev.candidates, blocked, wrong
            )
        else:
            out.append(m)
    return out


def _wrong_mask(m: Mismatch) -> npt.NDArray[np.bool_]:
    """Which bytes of ``m`` are wrong, as a mask (all of them for a single run)."""
    return np.ones(m.hi - m.lo, dtype=bool) if m.wrong is None else m.wrong


def distinct_values(values: list[Bytes] | None) -> list[Bytes] | None:
    """``values`` with each array's contents once, in first-seen order."""
    if values is None:
        return None
    unique: dict[bytes, Bytes] = {}
    for v in values:
        unique.setdefault(v.tobytes(), v)
    return list(unique.values())
