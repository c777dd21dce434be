"""acl-conformance reports: one run's results as report.json, report.md and report.html.

``build`` turns the results document the pytest plugin writes (schema
``acl-conformance-results/3``, or an earlier one: ``upgrade``) and a description of the
run into the report (schema ``report/4``, ``schema/report-4.schema.json`` in this
package; versions 1 to 3 are shipped too); ``write`` renders it as report.json,
report.md, report.html and junit.xml.  This package reads nothing but those two inputs.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from . import aggregate
from . import html
from . import junit
from . import markdown
from . import upgrade
from .evidence_text import instances_text
from .evidence_text import interrupted_text
from .evidence_text import shards_text

SCHEMA_VERSION = "4.0"
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
    rows = aggregate.requirement_rows(results)
    gate = aggregate.gate(results, rows)
    interrupted = results.get("interrupted") or None
    shard = results.get("shard") or None
    verdict, reasons = aggregate.verdict(
        rows,
        interrupted,
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
        "verdict_headline": aggregate.headline(verdict, rows, bool(interrupted), declined),
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


def write(report: dict[str, Any], out_dir: Path) -> list[Path]:
    """report.json, report.md, report.html and junit.xml in ``out_dir``; the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "report.json": json.dumps(report, indent=1, ensure_ascii=False) + "\n",
        "report.md": markdown.render(report),
        "report.html": html.render(report),
        "junit.xml": junit.render(report),
    }
    written = []
    for name, text in paths.items():
        p = out_dir / name
        p.write_text(text, encoding="utf-8")
        written.append(p)
    return written


__all__ = [
    "SCHEMA_VERSION",
    "aggregate",
    "build",
    "instances_text",
    "interrupted_text",
    "schema",
    "shards_text",
    "write",
]
