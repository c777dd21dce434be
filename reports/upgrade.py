"""A results document of an earlier schema, read as one of the current schema.

The fields renamed since schema ``acl-conformance-results/2`` are given their new names
(a copy is made; the document given is not changed), so that a report can still be made
of a results.json an earlier suite wrote:

- a test's ``evidence`` (the checks it made, the outcomes it saw, what masking took)
  is its ``tally``;
- a failure's ``kind`` is its ``status`` (fail, crash, timeout or flaky);
- an expectations or flakes entry's ``kind`` (requirement or test) is its ``target``;
- the Hypothesis settings profile ``ci`` is ``standard`` (the value of
  ``hypothesis_profile``);
- ``agents`` (the backend instances the run started) is ``instances``, and its reason
  ``recheck on a fresh agent`` is ``recheck on a fresh backend instance``.

A record of schema 1 (one failure, flat, no ``failures``) is read by ``aggregate``.  A
test's tally written before coverage was kept (no ``coverage``) is read as none known:
its rows have ``coverage`` null and no coverage line (``evidence.Tally.from_json``).
"""

from __future__ import annotations

from typing import Any


def current(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` with the field names of the current schema."""
    out = dict(results)
    if results.get("hypothesis_profile") == "ci":
        out["hypothesis_profile"] = "standard"
    if "agents" in results and "instances" not in results:
        out = _renamed(out, "agents", "instances")
        if isinstance(out["instances"], dict):
            out["instances"] = _instances(out["instances"])
    if isinstance(results.get("results"), list):
        out["results"] = [_record(t) for t in results["results"]]
    for listing in ("expectations", "flakes"):
        if isinstance(results.get(listing), dict):
            out[listing] = _listing(results[listing])
    return out


def _renamed(d: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``d`` with its ``old`` key called ``new`` (when it has the one and not the other)."""
    if old not in d or new in d:
        return d
    return {(new if k == old else k): v for k, v in d.items()}


def _record(t: dict[str, Any]) -> dict[str, Any]:
    t = _renamed(t, "evidence", "tally")
    if not isinstance(t.get("failures"), list):
        return t
    return {**t, "failures": [_renamed(f, "kind", "status") for f in t["failures"]]}


def _listing(listing: dict[str, Any]) -> dict[str, Any]:
    entries = listing.get("entries")
    if not isinstance(entries, list):
        return listing
    return {**listing, "entries": [_renamed(e, "kind", "target") for e in entries]}


_OLD_REASONS = {"recheck on a fresh agent": "recheck on a fresh backend instance"}


def _instances(instances: dict[str, Any]) -> dict[str, Any]:
    reasons = instances.get("reasons")
    if not isinstance(reasons, dict):
        return instances
    renamed = {_OLD_REASONS.get(k, k): v for k, v in reasons.items()}
    return {**instances, "reasons": dict(sorted(renamed.items()))}
