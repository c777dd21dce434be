"""The words every rendering uses for a requirement's evidence and for the two answers."""

from __future__ import annotations

from typing import Any


def evidence_lines(r: dict[str, Any]) -> list[str]:
    """What a requirement's verdict rests on, one sentence a line."""
    out = [
        f"{r.get('checks', 0)} checks of it ran" + (", all passed" if r["status"] == "pass" else "")
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
    for m in r.get("masked") or []:
        out.append(
            f"{m['tests']} of its tests ran with {m['requirement']} masked: "
            f"{m['declined']} steps declined, {m['set_aside']} violations of it set aside"
        )
    e = r.get("expected_failure")
    if e:
        out.append(entry_text(e, r["status"]))
    return out


def entry_text(e: dict[str, Any], status: str = "xfail") -> str:
    link = f" ({e['link']})" if e.get("link") else ""
    what = f"entry {e['key']}: {e.get('reason') or 'no reason given'}{link}"
    if status == "pass":
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
    backend did, the trace file and the command that reproduces it."""
    return [(key, label, str(c[key])) for key, label in COUNTEREXAMPLE_FACTS if c.get(key)]


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
