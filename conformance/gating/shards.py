"""Shards of a run (``--shard K/N``): which of the suite's tests part K of N runs, and the
results documents of the N parts merged into the results of one run.

A test is known by its suite id (``test_kinds.py::test_x[1]``, the same wherever pytest
found the suite).  The parts are made by one deterministic greedy assignment: the tests
in decreasing order of their weight (ties by suite id), each to the part that carries
least so far (ties: the lowest K).  Without durations every test weighs the same (so the
parts differ by one test at most); with ``--durations`` (the results.json of an earlier
run) a test weighs the seconds it took then, and a test that run did not have weighs the
mean of those it had.  Every part is computed from the whole collection, so the N parts
together are exactly the tests of the unsharded run, each in one part.

Merging refuses, in one line (:class:`ShardError`), shards that do not belong together:
another suite version, adapter, profile, seed or option, another collection or another
durations file, a shard missing or given twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .results import merge_instances


class ShardError(ValueError):
    """Shards that cannot be used (or merged) as given; the message is one line."""


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (1 to ``count``) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str, flag: str = "--shard") -> Shard:
    """``K/N`` as a :class:`Shard` (ShardError when it is not ``1 <= K <= N``)."""
    k, sep, n = str(text).partition("/")
    try:
        shard = Shard(int(k), int(n)) if sep else None
    except ValueError:
        shard = None
    if shard is None or not 1 <= shard.index <= shard.count:
        raise ShardError(f"{flag} {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return shard


def durations(results: Mapping[str, Any]) -> dict[str, float]:
    """The seconds each test took in a results document, by suite id."""
    out: dict[str, float] = {}
    for r in results.get("results") or []:
        if isinstance(r, dict) and isinstance(r.get("suite_id"), str):
            seconds = r.get("duration_s")
            if isinstance(seconds, (int, float)) and seconds >= 0:
                out[r["suite_id"]] = out.get(r["suite_id"], 0.0) + float(seconds)
    return out


def load_durations(path: Path, flag: str = "--durations") -> dict[str, float]:
    """:func:`durations` of the results.json at ``path`` (ShardError, one line, when it
    cannot be read or is not a results document)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ShardError(f"{flag} {path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ShardError(f"{flag} {path}: not a results file ({exc})") from None
    if not (
        isinstance(doc, dict)
        and str(doc.get("schema", "")).startswith("acl-conformance-results/")
        and isinstance(doc.get("results"), list)
    ):
        raise ShardError(
            f"{flag} {path}: not a results file (expected the results.json of an earlier run)"
        )
    return durations(doc)


def durations_digest(seconds: Mapping[str, float] | None) -> str | None:
    """What identifies a durations mapping (None: no durations): shards partitioned with
    different durations are not parts of one run."""
    if seconds is None:
        return None
    text = json.dumps(sorted(seconds.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def digest(ids: Sequence[str]) -> str:
    """What identifies a collection of tests: the hash of its sorted suite ids."""
    return hashlib.sha256("\n".join(sorted(set(ids))).encode()).hexdigest()[:16]


def partition(
    ids: Sequence[str], count: int, seconds: Mapping[str, float] | None = None
) -> list[list[str]]:
    """The ``count`` parts of the tests ``ids``, each a list of suite ids (see the module's
    docstring); the same for the same arguments, in any process."""
    unique = sorted(set(ids))
    known = [seconds[i] for i in unique if seconds is not None and i in seconds]
    default = sum(known) / len(known) if known else 1.0

    def weight(i: str) -> float:
        return float(seconds[i]) if seconds is not None and i in seconds else default

    parts: list[list[str]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for i in sorted(unique, key=lambda i: (-weight(i), i)):
        k = min(range(count), key=lambda j: (loads[j], j))
        parts[k].append(i)
        loads[k] += weight(i)
    return parts


def info(
    shard: Shard,
    all_ids: Sequence[str],
    seconds: Mapping[str, float] | None,
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """What a shard's results document says of it (its ``shard``): which part, of which
    collection (the count and digest of the unsharded run's tests), partitioned by which
    durations, and the options that decide the results but are not in the document."""
    return {
        "index": shard.index,
        "count": shard.count,
        "collected": len(set(all_ids)),
        "digest": digest(all_ids),
        "durations": durations_digest(seconds),
        "options": dict(options),
    }


# -- merging -------------------------------------------------------------------------------

_SAME = (
    ("suite_version", "suite version"),
    ("adapter", "adapter"),
    ("adapter_options", "adapter options"),
    ("profile", "profile"),
    ("seed", "seed"),
    ("examples", "--examples"),
    ("hypothesis_profile", "Hypothesis settings profile"),
    ("selected", "--requirement"),
    ("expectations", "expectations file"),
    ("flakes", "flakes file"),
)
"""What every shard of one run has the same (the document's field, what it is called)."""

_SAME_SHARD = (
    ("count", "number of shards"),
    ("options", "options"),
    ("durations", "--durations file"),
    ("digest", "collection of tests (another suite, or other options)"),
)


def _entries(doc: Mapping[str, Any], key: str) -> Any:
    """An expectations or flakes listing compared by its entries (not by the file's name)."""
    listing = doc.get(key)
    if isinstance(listing, dict):
        return listing.get("entries")
    return listing


def _value(doc: Mapping[str, Any], key: str) -> Any:
    if key == "selected":
        return sorted(doc.get(key) or [])  # --requirement A --requirement B is B A
    return _entries(doc, key) if key in ("expectations", "flakes") else doc.get(key)


def merge(docs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """The results document of one run made of its shards' (each given as (name, document)),
    in the order of their index; ShardError (one line) when they do not belong together."""
    if not docs:
        raise ShardError("no results to merge")
    for name, doc in docs:
        s = doc.get("shard")
        if not isinstance(s, dict) or not isinstance(s.get("index"), int):
            raise ShardError(f"{name}: not the results of a shard (a run without --shard)")
    first_name, first = docs[0]
    for name, doc in docs[1:]:
        for key, what in _SAME:
            if _value(doc, key) != _value(first, key):
                raise ShardError(
                    f"{name} and {first_name} are not shards of one run: another {what} "
                    f"({_value(doc, key)!r}, {_value(first, key)!r})"
                )
        for key, what in _SAME_SHARD:
            if doc["shard"].get(key) != first["shard"].get(key):
                raise ShardError(
                    f"{name} and {first_name} are not shards of one run: another {what} "
                    f"({doc['shard'].get(key)!r}, {first['shard'].get(key)!r})"
                )
    count = int(first["shard"]["count"])
    by_index: dict[int, str] = {}
    for name, doc in docs:
        k = int(doc["shard"]["index"])
        if k in by_index:
            raise ShardError(f"shard {k}/{count} given twice ({by_index[k]} and {name})")
        by_index[k] = name
    missing = [k for k in range(1, count + 1) if k not in by_index]
    if missing:
        raise ShardError(
            f"shard {', '.join(f'{k}/{count}' for k in missing)} missing: merge the results of "
            f"all {count} shards (given: {', '.join(f'{k}/{count}' for k in sorted(by_index))})"
        )
    ordered = sorted(docs, key=lambda d: int(d[1]["shard"]["index"]))
    seen: dict[str, str] = {}
    for name, doc in ordered:
        for sid in {r.get("suite_id") for r in doc.get("results") or []}:
            if sid in seen:
                raise ShardError(
                    f"test {sid} is in two shards ({seen[sid]} and {name}): not shards of one run"
                )
            seen[str(sid)] = name
    return _merged([d for _n, d in ordered])


def _merged(docs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The one document of shards known to belong together (in the order of their index)."""
    first = docs[0]
    out = dict(first)
    out["results"] = [r for d in docs for r in d.get("results") or []]
    out["shard"] = None
    out["shards"] = {
        "count": len(docs),
        "collected": first["shard"].get("collected"),
        "digest": first["shard"].get("digest"),
        "durations_s": [d.get("duration_s") for d in docs],
    }
    # The shards ran side by side: the run took as long as its slowest shard.
    out["duration_s"] = max(float(d.get("duration_s") or 0.0) for d in docs)
    out["started"] = min(str(d.get("started") or "") for d in docs) or first.get("started")
    out["workers"] = sum(int(d.get("workers") or 0) for d in docs)
    statuses = [int(d["exitstatus"]) for d in docs if d.get("exitstatus") is not None]
    out["exitstatus"] = max(statuses) if statuses else None
    for d in docs:
        if d.get("backend_version") and not out.get("backend_version"):
            out["backend_version"] = d["backend_version"]
        if d.get("capabilities") and not out.get("capabilities"):
            out["capabilities"] = d["capabilities"]
    parts = [d["instances"] for d in docs if isinstance(d.get("instances"), dict)]
    if parts:
        out["instances"] = merge_instances(parts)
    stopped = [
        f"shard {d['shard']['index']}/{d['shard']['count']}: {d['interrupted']}"
        for d in docs
        if d.get("interrupted")
    ]
    out["interrupted"] = "; ".join(stopped) or None
    # Why a shard did not reach its end, besides a stop: the merged run did not either.
    out["did_not_reach_its_end"] = [
        f"shard {d['shard']['index']}/{d['shard']['count']}: {why}"
        for d in docs
        for why in d.get("did_not_reach_its_end") or []
    ]
    if out["interrupted"] or out["did_not_reach_its_end"]:
        # What each shard was to run: a stopped shard's list, a finished one's tests.
        out["collected"] = [t for d in docs for t in _collected(d)]
    return out


def _collected(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    collected = doc.get("collected")
    if isinstance(collected, list):
        return collected
    return [
        {
            "suite_id": r.get("suite_id"),
            "requirements": list(r.get("requirements") or []),
            "skipped": r.get("status") == "skipped",
        }
        for r in doc.get("results") or []
    ]
