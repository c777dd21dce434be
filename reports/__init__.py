"""acl-conformance reports: one run's results as report.json, report.md and report.html.

``build`` turns the results document the pytest plugin writes (schema
``acl-conformance-results/3``, or an earlier one: ``upgrade``) and a description of the
run into the report (schema ``report/4``, ``schema/report-4.schema.json`` in this
package; versions 1 to 3 are shipped too); ``write`` renders it as report.json,
report.md, report.html and junit.xml.  This package reads nothing but those two inputs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr as xml_quote

from . import aggregate
from . import ending
from . import html
from . import junit
from . import markdown
from . import upgrade
from .evidence_text import instances_text
from .evidence_text import interrupted_text
from .evidence_text import shards_text

SCHEMA_VERSION = "4.1"
SCHEMA_FILE = "report-4.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema every report.json validates against."""
    text = resources.files(__package__).joinpath("schema").joinpath(SCHEMA_FILE).read_text("utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


def build(results: dict[str, Any], suite: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """The report of one run.

    ``suite``: {name, version, commit, dirty}; ``run``: {mode, jobs, command, machine,
    python, hypothesis, pytest, numpy} (the rest comes from ``results``, of the current
    schema or an earlier one).
    """
    results = upgrade.current(results)
    stopped = results.get("interrupted") or None  # a signal or the time budget
    ended = ending.reasons(results)
    why = "; ".join(ended) or None
    if why is not None:
        # What a run that did not reach its end left undecided is unknown (not reached);
        # each row names the first reason (the verdict and the run give them all).
        more = f" and {len(ended) - 1} more (see the run)" if len(ended) > 1 else ""
        results = {**results, "interrupted": ended[0] + more}
    rows = aggregate.requirement_rows(results)
    gate = aggregate.gate(results, rows)
    interrupted = stopped or why
    shard = results.get("shard") or None
    verdict, reasons = aggregate.verdict(
        rows,
        why,
        f"{shard['index']}/{shard['count']}" if shard else None,
        aggregate.run_declined(results),
    )
    declined = aggregate.declined_tests(results["results"])
    caps = results.get("capabilities") or {}
    seed = results.get("seed")
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": suite,
        "execution_target": {
            "adapter": results["adapter"],
            "adapter_options": results.get("adapter_options", {}),
            "backend": results.get("backend_name") or results["adapter"],
            "backend_version": results.get("backend_version", ""),
            "devices": caps.get("devices"),
            "capabilities": caps or None,
            "profile": results["profile"],
        },
        "run": {
            **run,
            "seed": seed,
            "seed_text": str(seed)
            if seed is not None
            else ("derandomised" if results.get("hypothesis_profile") == "standard" else "random"),
            "hypothesis_profile": results.get("hypothesis_profile"),
            "examples": results.get("examples"),
            "started": results.get("started"),
            "duration_s": results.get("duration_s"),
            "pytest_exitstatus": results.get("exitstatus"),
            "tests": len(results["results"]),
            "requirements_selected": list(results.get("selected") or []),
            "interrupted": interrupted,
            "did_not_reach_its_end": ended,
            "instances": results.get("instances"),
            "tests_collected": _collected(results),
            "shard": {"index": shard["index"], "count": shard["count"]} if shard else None,
            "shards": _shards(results),
        },
        "summary": {
            **aggregate.summary(rows),
            "tests_declined": declined["tests"],
            "tests_run": declined["of"],
        },
        "requirements": rows,
        "masking": aggregate.masking(results),
        "expectations": gate,
        "verdict": verdict,
        "verdict_headline": aggregate.headline(
            verdict,
            rows,
            ("interrupted" if ended == [f"stopped, {stopped}"] else "did not reach its end")
            if ended
            else False,
            declined,
        ),
        "verdict_reasons": reasons,
        "advisories": aggregate.advisories(rows),
        "gate": {"result": gate["result"], "reasons": gate["reasons"]},
    }


def _collected(results: dict[str, Any]) -> int | None:
    """How many tests the run was to run (known when it was stopped, and had collected)."""
    collected = results.get("collected")
    return len(collected) if isinstance(collected, list) else None


def _shards(results: dict[str, Any]) -> dict[str, Any] | None:
    """Of a report merged from shards: how many, and how many tests they had in all."""
    merged = results.get("shards")
    if not isinstance(merged, dict):
        return None
    return {"count": merged.get("count"), "tests_collected": merged.get("collected")}


_RENDER: dict[str, Callable[[dict[str, Any]], str]] = {
    "report.json": lambda report: json.dumps(report, indent=1, ensure_ascii=False) + "\n",
    "report.md": markdown.render,
    "report.html": html.render,
    "junit.xml": junit.render,
}


def write(report: dict[str, Any], out_dir: Path) -> list[Path]:
    """report.json, report.md, report.html and junit.xml in ``out_dir``; the paths written.

    A format that cannot be rendered does not stop the others: the report is then not
    whole, so it is marked as a run that did not reach its end (``mark_ended``: not
    conformant, the gate failing) in every format that can be, and the one that could not
    is written as a few lines saying so.  OSError (the folder cannot be written) is
    raised."""
    out_dir.mkdir(parents=True, exist_ok=True)
    texts, broken = _render(report)
    if broken:
        mark_ended(report, f"the report could not be written whole ({'; '.join(broken)})")
        texts, _again = _render(report)
    written = []
    for name in _RENDER:
        text = texts.get(name)
        p = out_dir / name
        p.write_text(text if text is not None else _placeholder(name, report), encoding="utf-8")
        written.append(p)
    return written


def _render(report: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    texts: dict[str, str] = {}
    broken: list[str] = []
    for name, render in _RENDER.items():
        try:
            texts[name] = render(report)
        except Exception as exc:  # a MemoryError too: said, and the report marked
            text = " ".join(str(exc).split())[:200]
            broken.append(f"{name}: {type(exc).__name__}{': ' + text if text else ''}")
    return texts, broken


def mark_ended(report: dict[str, Any], why: str) -> None:
    """Mark a report as one of a run that did not reach its end (``why``, one line): not
    conformant, the gate failing, the reason in its run, verdict and gate."""
    run = report["run"]
    run["did_not_reach_its_end"] = [*(run.get("did_not_reach_its_end") or []), why]
    run["interrupted"] = "; ".join(x for x in (run.get("interrupted"), why) if x)
    reason = f"the run did not reach its end: {why}"
    report["verdict"] = "not conformant"
    report["verdict_reasons"] = [*report.get("verdict_reasons", []), reason]
    report["verdict_headline"] = aggregate.headline(
        "not conformant", report.get("requirements") or [], "did not reach its end"
    )
    for gate in (report.get("gate"), report.get("expectations")):
        if isinstance(gate, dict):
            gate["result"] = "fail"
            gate["reasons"] = [*gate.get("reasons", []), reason]


def _placeholder(name: str, report: dict[str, Any]) -> str:
    """What is written in place of a format that could not be rendered."""
    why = "; ".join(report["run"].get("did_not_reach_its_end") or [])
    line = f"NOT CONFORMANT: the run did not reach its end: {why}"
    if name == "report.json":
        doc = {
            "schema_version": SCHEMA_VERSION,
            "verdict": "not conformant",
            "verdict_headline": "NOT CONFORMANT (did not reach its end)",
            "verdict_reasons": [line],
            "gate": {"result": "fail", "reasons": [line]},
            "run": {"interrupted": why, "did_not_reach_its_end": [why]},
        }
        return json.dumps(doc, indent=1) + "\n"
    if name == "junit.xml":
        return (
            '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite '
            'name="acl-conformance" tests="1" failures="1"><testcase classname="acl-conformance.run" '
            f'name="the run reached its end"><failure type="did not reach its end" '
            f"message={xml_quote(line)}/></testcase></testsuite></testsuites>\n"
        )
    if name == "report.html":
        return f"<!doctype html><title>acl-conformance</title><p><b>{escape(line)}</b></p>\n"
    return f"# acl-conformance\n\n**{line}**\n"


__all__ = [
    "SCHEMA_VERSION",
    "aggregate",
    "build",
    "ending",
    "instances_text",
    "interrupted_text",
    "mark_ended",
    "schema",
    "shards_text",
    "write",
]
