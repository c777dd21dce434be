"""report.html: one self-contained page (inline style, no scripts, nothing fetched)."""

from __future__ import annotations

from html import escape
from pathlib import PurePath
from typing import Any

from .evidence_text import answers
from .evidence_text import counterexample_facts
from .evidence_text import evidence_lines
from .evidence_text import gate_basis
from .evidence_text import instances_text
from .evidence_text import interrupted_text
from .evidence_text import shards_text
from .status import SHOWN
from .status import Status

COLOUR = {
    Status.PASS: "#d7f5d7",
    Status.FAIL: "#f8c9c9",
    Status.CRASH: "#f3b0e0",
    Status.TIMEOUT: "#f6d6a8",
    Status.FLAKY: "#e9d2f5",
    Status.UNKNOWN: "#e6e6e6",
    Status.XFAIL: "#f7efb3",
    Status.NOT_SUPPORTED: "#dde8f7",
}
"""The background of a requirement's row, by its status (every one of ``status.SHOWN``)."""

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:72em}
table{border-collapse:collapse;width:100%}
td,th{border:1px solid #bbb;padding:.3em .5em;vertical-align:top;text-align:left}
td:last-child{overflow-wrap:anywhere}
th{background:#f0f0f0}
pre{background:#f7f7f7;padding:.5em;white-space:pre-wrap;font-size:12px}
.verdict{font-size:1.4em;font-weight:bold}
.answer{margin:.4em 0}.label{font-size:1.1em;color:#444;min-width:11em;display:inline-block}
.conformant{color:#186418}.notconformant{color:#9a1515}
blockquote{margin:.3em 0 .3em 1em;color:#444;font-style:italic}
.basis{color:#444}.attention{font-weight:bold}
.stopped{background:#f6d6a8;border:2px solid #9a1515;padding:.5em;font-weight:bold}
"""


NEEDS_ATTENTION = tuple(s for s in SHOWN if s not in (Status.PASS, Status.NOT_SUPPORTED))
"""The statuses of a requirement that did not pass (a missing capability aside)."""


def _gate_rows(report: dict[str, Any]) -> set[str]:
    """The requirements the gate fails on: a new failure, or an expectations entry gone
    stale (an unexpected pass)."""
    exp = report["expectations"]
    stale = {
        e["requirement"] for e in exp.get("stale_entries") or [] if e.get("target") == "requirement"
    }
    return set(exp.get("new_failures") or []) | stale


def ordered_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The requirements in the order the page lists them: first those the gate fails on
    (a new failure, an unexpected pass), then the others that did not pass (an expected
    failure, an accepted flake), then the rest; in catalogue order within each, so that
    a vendor sees what needs attention without scrolling past the rows that passed."""
    gate = _gate_rows(report)

    def rank(r: dict[str, Any]) -> int:
        if r["id"] in gate:
            return 0
        return 1 if r["status"] in NEEDS_ATTENTION else 2

    return sorted(report["requirements"], key=rank)  # sorted is stable: catalogue order kept


def _attention(report: dict[str, Any]) -> str:
    """One line under the answers naming what needs attention, which the table lists first."""
    gate = _gate_rows(report)
    shown = []
    for r in ordered_rows(report):
        if r["id"] in gate and r["status"] == Status.PASS:
            shown.append(f"{r['id']} (passed, but its expectations entry says it fails)")
        elif r["id"] in gate or r["status"] in NEEDS_ATTENTION:
            shown.append(f"{r['id']} ({str(r['status']).replace('_', ' ')})")
    if not shown:
        return ""
    return (
        '<p class="attention">First in the table below, before the requirements that passed: '
        + escape(", ".join(shown))
        + ".</p>"
    )


def _row(r: dict[str, Any]) -> str:
    colour = COLOUR.get(r["status"], "#fff")
    details = []
    quotes = "".join(f"<blockquote>{escape(q)}</blockquote>" for q in r["quote"])
    tests = "".join(
        f"<li><code>{escape(x['nodeid'])}</code>: {escape(x['status'])}, "
        f"{x.get('checks', 0)} checks ({x['duration_s']} s)</li>"
        for x in r["tests"]
    )
    details.append(quotes)
    details.append(
        "<p><b>Evidence:</b></p><ul>"
        + "".join(f"<li>{escape(x)}</li>" for x in evidence_lines(r))
        + "</ul>"
    )
    if r.get("silent"):
        details.append(f"<p><b>The text is silent:</b> {escape(r['silent'])}</p>")
    c = r.get("counterexample")
    if c:
        details.append(f"<p><b>Counterexample</b> from <code>{escape(c['test'])}</code></p>")
        if c["calls"]:
            details.append("<pre>" + escape("\n".join(f"{x};" for x in c["calls"])) + "</pre>")
        details += [
            f"<p><b>{label}:</b> <code>{escape(value)}</code></p>"
            for _, label, value in counterexample_facts(c)
        ]
        if c.get("message"):
            details.append("<pre>" + escape(c["message"]) + "</pre>")
    if r.get("cut_short_by"):
        details.append(
            "<p>Some tests were cut short by the failure of "
            + escape(", ".join(r["cut_short_by"]))
            + ": what they would have checked here is unknown.</p>"
        )
    details.append(f"<ul>{tests}</ul>")
    return (
        f'<tr style="background:{colour}"><td><b>{escape(r["id"])}</b></td>'
        f"<td>{escape(str(r['level']))}</td><td>{escape(r['clause'])}</td>"
        f"<td><b>{escape(r['status'])}</b></td><td>{r.get('checks', 0)}</td>"
        f"<td><details{' open' if c else ''}><summary>{escape(r['title'])}</summary>"
        f"{''.join(details)}</details></td></tr>"
    )


def render(report: dict[str, Any]) -> str:
    t = report["execution_target"]
    run = report["run"]
    suite = report["suite"]
    s = report["summary"]
    verdict = report["verdict"]
    exp = report["expectations"]
    unused = "".join(
        f"<li>entry <code>{escape(k)}</code> matched no test that ran</li>" for k in exp["unused"]
    )
    entries = "".join(
        f"<li><code>{escape(e['key'])}</code>: {escape(e.get('reason') or '')}"
        + (f' (<a href="{escape(e["link"])}">{escape(e["link"])}</a>)' if e.get("link") else "")
        + "</li>"
        for e in exp.get("entries", [])
    )
    blocks = []
    for name, value, why in answers(report):
        good = value.startswith("PASS") or value == "CONFORMANT"
        basis = (
            f' <span class="basis">({escape(gate_basis(report))})</span>' if name == "gate" else ""
        )
        blocks.append(
            f'<div class="answer"><span class="label">{escape(name)}</span> '
            f'<span class="verdict {"conformant" if good else "notconformant"}">{escape(value)}</span>'
            f"{basis}<ul>{''.join(f'<li>{escape(x)}</li>' for x in why)}</ul></div>"
        )
    advisories = "".join(f"<li>{escape(x)}</li>" for x in report.get("advisories") or [])
    counts = "".join(
        f'<td style="background:{COLOUR[k]}">{escape(k.value)}: {s.get(k.value, 0)}</td>'
        for k in SHOWN
    )
    stopped = interrupted_text(run)
    banner = f'<p class="stopped">{escape(stopped)}</p>' if stopped else ""
    rows = "".join(_row(r) for r in ordered_rows(report))
    options = ", ".join(f"{k}={v}" for k, v in t["adapter_options"].items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>acl-conformance report: {escape(verdict)}</title>
<style>{STYLE}</style></head><body>
<h1>acl-conformance report</h1>
{banner}
{"".join(blocks)}
{_attention(report)}
{f"<p>SHOULD and MAY requirements not met (they do not decide the verdict):</p><ul>{advisories}</ul>" if advisories else ""}
<table>
<tr><th>backend</th><td>{escape(t["backend_version"])} (adapter <code>{escape(t["adapter"])}</code>{escape(", " + options if options else "")}), {escape(str(t["devices"]))} device(s)</td></tr>
<tr><th>profile</th><td>{escape(t["profile"])} (mode {escape(run["mode"])})</td></tr>
<tr><th>suite</th><td>{escape(suite["name"])} {escape(suite["version"])}, commit <code>{escape(str(suite["commit"]))}</code>{" (with local changes)" if suite.get("dirty") else ""}</td></tr>
<tr><th>run</th><td>Hypothesis profile {escape(str(run["hypothesis_profile"]))}, seed {escape(run["seed_text"])}; {run["tests"]} tests, {run["jobs"]} worker(s), {run["duration_s"]} s, started {escape(str(run["started"]))}</td></tr>
{f"<tr><th>shards</th><td>{escape(shards_text(run))}</td></tr>" if shards_text(run) else ""}
{f"<tr><th>backend instances</th><td>{escape(instances_text(run))}</td></tr>" if instances_text(run) else ""}
{f"<tr><th>workers</th><td>{escape(str(run['workers']))}</td></tr>" if run.get("workers") else ""}
<tr><th>machine</th><td>{escape(str(run["machine"]))}; Python {escape(run["python"])}, Hypothesis {escape(run["hypothesis"])}, pytest {escape(run["pytest"])}</td></tr>
</table>
<h2>Summary</h2>
<table><tr>{counts}<td>total: {s["total"]}</td></tr></table>
{f"<h2>Expectations</h2><p>file <code>{escape(PurePath(str(exp['file'])).name)}</code></p><ul>{entries}{unused}</ul>" if exp.get("file") else ""}
<h2>Requirements</h2>
<p>What the gate fails on first, then the other requirements that did not pass, then the rest, each in catalogue order.</p>
<table><tr><th>requirement</th><th>level</th><th>area</th><th>status</th><th>checks</th><th>statement (click for details)</th></tr>
{rows}
</table>
</body></html>
"""
