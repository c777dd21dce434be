"""The words every rendering uses for a requirement's evidence and for the two answers."""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from .status import Status


def evidence_lines(r: dict[str, Any]) -> list[str]:
    """What a requirement's status rests on, one sentence a line."""
    out = [
        f"{r.get('checks', 0)} checks of it ran"
        + (", all passed" if r["status"] == Status.PASS else "")
    ]
    if r.get("reason"):
        out.append(f"why {r['status'].replace('_', ' ')}: {r['reason']}")
    o = r.get("outcomes")
    if o:
        out.append("outcomes seen: " + ("; ".join(o["seen"]) or "none"))
        if o["not_seen"]:
            out.append(
                "allowed but never seen in this run (the pass does not rest on them): "
                + "; ".join(o["not_seen"])
            )
    c = r.get("coverage")
    if c:
        out.append("copies its checks judged, by host memory: " + coverage_text(c))
        if c["small_only"]:
            out.append(
                f"rests on copies smaller than {size_text(c['small_below'])} only for "
                f"{' and '.join(c['small_only'])} memory: a data path a backend takes for "
                "larger copies of it is not tested"
            )
    d = r.get("declined")
    if d and d.get("tests"):
        by = ", ".join(f"{k} {v}" for k, v in (d.get("by") or {}).items())
        out.append(
            f"{d['tests']} of the {d['of']} tests of it that ran were declined (steps not taken, "
            f"citing {by}); first: {d.get('first')}"
        )
    for m in r.get("masked") or []:
        out.append(
            f"{m['tests']} of its tests ran with {m['requirement']} masked: "
            f"{m['declined']} steps declined, {m['set_aside']} violations of it set aside"
        )
    e = r.get("expected_failure")
    if e:
        out.append(entry_text(e, r["status"]))
    f = r.get("flake")
    if f:
        link = f" ({f['link']})" if f.get("link") else ""
        out.append(
            f"a flake the gate accepts, entry {f['key']} of the flakes file: "
            f"{f.get('reason') or 'no reason given'}{link}"
        )
    return out


COVERAGE_NAMES = {"unknown": "memory the suite did not allocate"}
"""How a kind of host memory is called in the coverage line, where not by its key."""


def coverage_text(c: dict[str, Any]) -> str:
    """A row's coverage in one line: per kind of host memory, the range of counts its
    checks judged and whether odd offsets were seen; the kinds never seen last."""
    parts = [
        f"{COVERAGE_NAMES.get(k, k)}: {extent_text(e)}" for k, e in (c.get("kinds") or {}).items()
    ]
    parts += [f"{k}: never" for k in c.get("never") or []]
    return "; ".join(parts)


def extent_text(e: dict[str, Any]) -> str:
    """``1 B to 496 B, no odd offset`` / ``4 KiB, odd symbol offset and host address seen``."""
    lo, hi = size_text(e["smallest"]), size_text(e["largest"])
    sizes = lo if lo == hi else f"{lo} to {hi}"
    odd = [
        w
        for w, seen in (("symbol offset", e["odd_offset"]), ("host address", e["odd_host"]))
        if seen
    ]
    return f"{sizes}, " + (f"odd {' and '.join(odd)} seen" if odd else "no odd offset")


def small_note(c: dict[str, Any] | None, said: Collection[str] = ()) -> str:
    """The terminal's short form for a row resting on small copies only for some kind of
    host memory ('' for none): ``small copies only: pageable up to 496 B``.  The kinds in
    ``said`` (small in the whole run, ``small_everywhere``) are left to the run's line."""
    kinds = [k for k in (c or {}).get("small_only") or [] if k not in said]
    if not c or not kinds:
        return ""
    return "small copies only: " + ", ".join(
        f"{k} up to {size_text(c['kinds'][k]['largest'])}" for k in kinds
    )


def small_everywhere(rows: Sequence[dict[str, Any]]) -> tuple[dict[str, int], int]:
    """The kinds of host memory whose copies were small under every requirement of the run
    (kind -> the largest count), and the size below which a copy is small: one line for
    the run instead of one note per row."""
    covs = [r["coverage"] for r in rows if r.get("coverage")]
    if not covs:
        return {}, 0
    below = int(covs[0]["small_below"])
    largest: dict[str, int] = {}
    for c in covs:
        for k, e in c["kinds"].items():
            largest[k] = max(largest.get(k, 0), int(e["largest"]))
    small = {k for c in covs for k in c["small_only"]}  # pinned, pageable, registered
    return {k: n for k, n in largest.items() if k in small and n < below}, below


def small_everywhere_text(kinds: dict[str, int], below: int) -> str:
    """The run's line for ``small_everywhere`` ('' for none)."""
    if not kinds:
        return ""
    what = ", ".join(f"{k} up to {size_text(n)}" for k, n in kinds.items())
    return (
        f"small copies only, under every requirement: {what} (no check judged a copy of "
        f"{size_text(below)} or more in that memory)"
    )


def size_text(n: int) -> str:
    """A count of bytes, exact: ``496 B``, ``64 KiB``, ``16 MiB``, ``65,537 B``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} B"


def entry_text(e: dict[str, Any], status: str = Status.XFAIL) -> str:
    link = f" ({e['link']})" if e.get("link") else ""
    what = f"entry {e['key']}: {e.get('reason') or 'no reason given'}{link}"
    if status == Status.PASS:
        return f"listed as an expected failure ({what}), and it passed: the entry is stale"
    return f"expected failure, {what}"


COUNTEREXAMPLE_FACTS = (
    ("allowed", "allowed"),
    ("observed", "backend"),
    ("trace_file", "trace"),
    ("reproduce", "reproduce"),
)
"""(key, label) of what a counterexample shows besides its calls and message, in order."""


def counterexample_facts(c: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(key, label, value) of the facts ``c`` has: what the model allowed, what the
    backend did, the trace file, what replaying it against a fresh backend did and the
    command that reproduces it."""
    facts = [(key, label, str(c[key])) for key, label in COUNTEREXAMPLE_FACTS if c.get(key)]
    replayed = replay_text(c.get("replay"))
    if replayed:
        at = next((i for i, f in enumerate(facts) if f[0] == "reproduce"), len(facts))
        facts.insert(at, ("replay", "replayed against a fresh backend", replayed))
    return facts


def replay_text(replayed: dict[str, Any] | None) -> str:
    """What replaying a failing trace against a fresh backend did, in words ('' if it was
    not replayed)."""
    if not replayed:
        return ""
    if replayed.get("reproduced") is None:
        return str(replayed.get("note") or "")
    if replayed["reproduced"]:
        text = f"failed again (broke {', '.join(replayed.get('broken') or ['?'])})"
    else:
        text = "every call was allowed: the failure is flaky"
    if replayed.get("trace_file"):
        text += f"; the replay's trace: {replayed['trace_file']}"
    return text


def gate_basis(report: dict[str, Any]) -> str:
    """What the gate was measured against, in words: the expectations file (by its name,
    never its full path: the reports go to other machines) and the flakes file, or that
    there was no expectations file, so that every failure counts."""
    exp = report["expectations"]
    flakes = exp.get("flakes") or {}
    if exp.get("file"):
        n = len(exp.get("entries") or [])
        name = PurePath(str(exp["file"])).name
        text = f"against the expectations file {name}, {n} {'entry' if n == 1 else 'entries'}"
    else:
        text = "no expectations file: every failure counts"
    if flakes.get("file"):
        name = PurePath(str(flakes["file"])).name
        text += f"; flaky failures the flakes file {name} lists are accepted"
    return text


def answers(report: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(name, value, reasons) of the two answers: the gate and the conformance verdict."""
    gate = report["gate"]
    return [
        ("gate", gate["result"].upper(), list(gate["reasons"])),
        (
            "conformance verdict",
            report.get("verdict_headline") or report["verdict"].upper(),
            list(report["verdict_reasons"]),
        ),
    ]


def interrupted_text(run: dict[str, Any]) -> str:
    """For a run that did not reach its end (``run`` of a report): what stopped it, or what
    went wrong, and how far it got ('' for a run that reached its end)."""
    if not run.get("interrupted"):
        return ""
    total = run.get("tests_collected")
    of = f" of {total}" if total is not None else ""
    ended = run.get("did_not_reach_its_end") or []
    if ended and ended != [f"stopped, {run['interrupted']}"]:
        # not (only) stopped: something went wrong on the way, said as it was
        return (
            f"Did not reach its end: {'; '.join(ended)}.  {run['tests']}{of} tests have a "
            "result; what the run did not decide is unknown, and it is not conformant."
        )
    return (
        f"Interrupted: the run was stopped ({run['interrupted']}); {run['tests']}{of} tests "
        "finished, and the requirements whose tests it did not reach are unknown (not reached)."
    )


def shards_text(run: dict[str, Any]) -> str:
    """What part of the suite a report covers, in one sentence: merged from N shards, or one
    shard of N ('' for a whole run)."""
    merged = run.get("shards")
    if merged:
        total = merged.get("tests_collected")
        of = f", {total} tests in all" if total is not None else ""
        return f"Merged from {merged['count']} shards (--shard K/{merged['count']}){of}."
    shard = run.get("shard")
    if shard:
        return (
            f"Shard {shard['index']}/{shard['count']}: only part of the suite's tests ran; "
            "its rows are the requirements of those tests, and the verdict is that of all "
            f"{shard['count']} shards merged (acl-conformance report A/results.json B/results.json ...)."
        )
    return ""


def instances_text(run: dict[str, Any]) -> str:
    """How many backend instances the run started and why, in one sentence ('' when the
    results do not say)."""
    a = run.get("instances")
    if not a:
        return ""
    why = ", ".join(f"{k} {v}" for k, v in (a.get("reasons") or {}).items())
    text = f"backend instances started: {a.get('started', 0)}" + (f" ({why})" if why else "")
    restarts = a.get("restarts") or []
    if restarts:
        first = restarts[0]
        charged = sum(1 for r in restarts if r.get("charged"))
        text += (
            f"; {len(restarts)} after a failure, {charged} of them charged to the test that met "
            f"it (first: {first.get('reason')} in {first.get('test') or 'no test'}"
            + (f", {first['call']}" if first.get("call") else "")
            + (f", charged to {first['requirement']}" if first.get("requirement") else "")
            + (f": {first['why']}" if first.get("why") and not first.get("call") else "")
            + ")"
        )
    recovered = a.get("recovered") or []
    if recovered:
        more = f" and {len(recovered) - 1} more" if len(recovered) > 1 else ""
        why = (a.get("recovered_failures") or [""])[0]
        text += (
            f"; recovered by a fresh backend instance: {recovered[0]}{more} failed on a reused instance "
            + (f"({why}) " if why else "")
            + "and passed on fresh ones (the backend keeps state across examples)"
        )
    return text
