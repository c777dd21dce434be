"""Every restart of a backend instance that a backend's failure caused is charged to the
test that met it (issue 34: nothing a backend does wrong may vanish into "a new instance
was started"): ``selfcheck.uncharged_restarts`` finds those that were not, and the report
lists the restarts with their cause."""

from __future__ import annotations

from typing import Any

from acl_conformance.conformance.command_line.selfcheck import uncharged_restarts
from acl_conformance.conformance.gating.results import instances
from acl_conformance.conformance.gating.results import merge_instances
from acl_conformance.reports.evidence_text import instances_text

NODE = "conformance/suite/test_hygiene.py::test_x[a]"


def _doc(restarts: list[dict[str, Any]], failures: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "results": [
            {"nodeid": NODE, "suite_id": "test_hygiene.py::test_x[a]", "failures": failures}
        ],
        "instances": instances({"start": 1, "timeout": 1}, [], [], [], restarts),
    }


def _restart(reason: str, **kw: Any) -> dict[str, Any]:
    return {"reason": reason, "test": NODE, "why": "", "call": None, "requirement": None, **kw}


def test_a_restart_with_the_failure_charged_to_its_test_is_fine() -> None:
    hang = _restart("timeout", call="aclrtSynchronizeDevice()", requirement="X", charged=True)
    assert uncharged_restarts(_doc([hang], [{"status": "timeout", "requirement": "X"}])) == []


def test_a_restart_whose_failure_reached_no_test_is_named() -> None:
    hang = _restart("timeout", call="aclrtSynchronizeDevice()", requirement="X", charged=True)
    lost = uncharged_restarts(_doc([hang], []))
    assert len(lost) == 1 and "aclrtSynchronizeDevice()" in lost[0] and NODE in lost[0]
    crash = _restart("crash", call="aclrtFreeHost(p)", requirement="Y", charged=False)
    assert len(uncharged_restarts(_doc([crash], []))) == 1


def test_a_reset_the_suite_could_not_make_is_not_a_lost_failure() -> None:
    own = _restart("failed reset", why="g_arr1m on device 1 ... never read", charged=False)
    assert uncharged_restarts(_doc([own], [])) == []
    # a failed reset caused by a wrong answer must be charged like any other
    wrong = _restart("failed reset", call="aclrtMemcpyFromSymbol(...)", requirement="Z")
    assert len(uncharged_restarts(_doc([wrong], []))) == 1


def test_the_report_lists_restarts_with_their_cause() -> None:
    hang = _restart("timeout", call="aclrtSynchronizeDevice()", requirement="X", charged=True)
    merged = merge_instances([instances({"timeout": 1}, [], [], [], [hang]), instances({}, [], [])])
    assert merged["restarts"] == [hang]
    text = instances_text({"instances": merged})
    assert "1 after a failure, 1 of them charged" in text
    assert "aclrtSynchronizeDevice()" in text and "charged to X" in text
