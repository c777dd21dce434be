"""report.md: the report as Markdown (a table per requirement, counterexamples below)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from .evidence_text import answers
from .evidence_text import counterexample_facts
from .evidence_text import entry_text
from .evidence_text import evidence_lines
from .evidence_text import gate_basis
from .evidence_text import instances_text
from .evidence_text import interrupted_text
from .evidence_text import shards_text
from .status import Status

ICON = {
    Status.PASS: "PASS",
    Status.FAIL: "**FAIL**",
    Status.CRASH: "**CRASH**",
    Status.TIMEOUT: "**TIMEOUT**",
    Status.FLAKY: "**FLAKY**",
    Status.UNKNOWN: "**UNKNOWN**",
    Status.XFAIL: "XFAIL",
    Status.NOT_SUPPORTED: "not supported",
}
"""How a requirement's status reads in its row (every one of ``status.SHOWN``)."""


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(report: dict[str, Any]) -> str:
    t = report["execution_target"]
    run = report["run"]
    suite = report["suite"]
    s = report["summary"]
    (gate_name, gate, gate_reasons), (v_name, verdict, v_reasons) = answers(report)
    out = [
        f"# acl-conformance report: {verdict}",
        "",
        f"- **{v_name}**: {verdict} (does the backend meet every MUST of the profile)",
        f"- **{gate_name}**: {gate} ({_cell(gate_basis(report))})",
        f"- backend: `{_cell(t['backend_version'])}` (adapter `{t['adapter']}`"
        + (
            ", options " + ", ".join(f"`{k}={v}`" for k, v in t["adapter_options"].items())
            if t["adapter_options"]
            else ""
        )
        + f"), {t['devices']} device(s)",
        f"- profile: `{t['profile']}`; mode: `{run['mode']}`",
        f"- suite: {suite['name']} {suite['version']} (commit `{suite['commit']}`"
        + (", with local changes" if suite.get("dirty") else "")
        + ")",
        f"- Hypothesis profile `{run['hypothesis_profile']}`, seed {run['seed_text']}"
        + (f", {run['examples']} examples per test" if run.get("examples") else "")
        + f"; {run['tests']} tests, {run['jobs']} worker(s), {run['duration_s']} s",
        *([f"- workers: {_cell(run['workers'])}"] if run.get("workers") else []),
        f"- machine: {_cell(run['machine'])}; Python {run['python']}, "
        f"Hypothesis {run['hypothesis']}, pytest {run['pytest']}",
        *([f"- {_cell(instances_text(run))}"] if instances_text(run) else []),
        *([f"- {_cell(shards_text(run))}"] if shards_text(run) else []),
        "",
        "| pass | fail | crash | timeout | flaky | unknown | xfail | not supported | total |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {s['pass']} | {s['fail']} | {s['crash']} | {s['timeout']} | {s.get('flaky', 0)} "
        f"| {s['unknown']} | {s['xfail']} | {s['not_supported']} | {s['total']} |",
        "",
    ]
    stopped = interrupted_text(run)
    if stopped:
        # First after the title: every row below is read in its light.
        out[1:1] = ["", f"**{stopped}**"]
    if v_reasons:
        out += ["Why not conformant:", ""]
        out += [f"- {_cell(r)}" for r in v_reasons]
        out.append("")
    if report.get("advisories"):
        out += ["SHOULD and MAY requirements not met (they do not decide the verdict):", ""]
        out += [f"- {_cell(r)}" for r in report["advisories"]]
        out.append("")
    if gate_reasons:
        out += ["Why the gate fails:", ""]
        out += [f"- {_cell(r)}" for r in gate_reasons]
        out.append("")
    exp = report["expectations"]
    if exp.get("file"):
        # By its name: report.md is read on other machines (a CI's summary page), where the
        # path the run was given means nothing.
        name = PurePath(str(exp["file"])).name
        out.append(f"Expectations file `{_cell(name)}`: {len(exp['entries'])} entries.")
        for e in exp["entries"]:
            link = f" ({e['link']})" if e.get("link") else ""
            out.append(f"- `{e['key']}`: {_cell(e.get('reason') or '')}{link}")
        for key in exp["unused"]:
            out.append(f"- entry `{key}` matched no test that ran (stale, or a typo)")
        out.append("")
    out += [
        "## Requirements",
        "",
        "| requirement | level | area | status | checks | statement | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report["requirements"]:
        out.append(
            f"| {r['id']} | {r['level']} | {r['clause']} | {ICON.get(r['status'], r['status'])}"
            f" | {r.get('checks', 0)} | {_cell(r['title'])} | "
            f"{_cell('; '.join(evidence_lines(r)[1:]))} |"
        )
    failing = [r for r in report["requirements"] if r["counterexample"]]
    if failing:
        out += ["", "## Counterexamples", ""]
    for r in failing:
        c = r["counterexample"]
        out += [f"### {r['id']} ({r['status']})", "", f"Test `{c['test']}`.", ""]
        if r.get("expected_failure"):
            out += [_cell(entry_text(r["expected_failure"])), ""]
        for q in r["quote"]:
            out.append(f"> {q}")
        out.append("")
        if c["calls"]:
            out += ["```c", *[f"{line};" for line in c["calls"]], "```", ""]
        for key, label, value in counterexample_facts(c):
            hint = " (`acl-conformance replay` it)" if key == "trace_file" else ""
            out.append(f"- {label}: `{_cell(value)}`{hint}")
        out.append("")
    silent = [r for r in report["requirements"] if r.get("silent")]
    if silent:
        out += ["## Where the specification is silent", ""]
        out += [f"- **{r['id']}**: {_cell(r['silent'])}" for r in silent]
        out.append("")
    return "\n".join(out) + "\n"
