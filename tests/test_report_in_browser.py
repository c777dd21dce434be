"""report.html in a real browser: headless Chromium renders it, and the screenshot shows it.

Skipped (with the reason) where Debian's chromium is not installed; CI machines
have no browser, a developer's machine with `apt-get install chromium` runs it.
"""

from __future__ import annotations

import pytest
from test_reports import RUN
from test_reports import SUITE
from test_reports import _results
from test_reports import _test

from acl_conformance import reports
from acl_conformance.reports import screenshot

Image = pytest.importorskip("PIL.Image", reason="Pillow reads the screenshot")
if screenshot.find_chromium() is None:
    pytest.skip("no Chromium here (apt-get install chromium)", allow_module_level=True)


def _colour(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def test_report_renders_with_the_failing_row_coloured(tmp_path) -> None:
    failing = _test("t_fail", "fail", ["KIND-REJECTED"], failed="KIND-REJECTED")
    # a long unbroken line, as a reproduce command or a trace path is
    failing["reproduce"] = "pytest '" + "x" * 400 + "'"
    tests = [failing, _test("t_pass", "pass", ["KIND-ACCEPTED"])]
    selected = ["KIND-ACCEPTED", "KIND-REJECTED"]
    report = reports.build(_results(tests, selected=selected), SUITE, RUN)
    reports.write(report, tmp_path)
    png = tmp_path / "report.png"
    screenshot.screenshot(tmp_path / "report.html", png, width=1200, height=1500)

    with Image.open(png) as img:
        assert img.size == (1200, 1500)
        rgb = img.convert("RGB")
        pixels = rgb.get_flattened_data()
        # The page keeps to its width: nothing runs into the right-hand margin.
        margin = rgb.crop((1120, 0, 1200, 1500)).get_flattened_data()
        assert set(margin) == {(255, 255, 255)}, "the page is wider than the window"
        counts: dict[tuple[int, int, int], int] = {}
        for p in pixels:
            counts[p] = counts.get(p, 0) + 1
    total = 1200 * 1500
    fail_bg = counts.get(_colour(reports.html.COLOUR["fail"]), 0)
    pass_bg = counts.get(_colour(reports.html.COLOUR["pass"]), 0)
    dark = sum(n for (r, g, b), n in counts.items() if r + g + b < 200)
    # The failing requirement's row (open on its counterexample) and the summary
    # cell fill a visible area in the fail colour; the passing one in green;
    # and there is text on the page, not a blank or an error page.
    assert fail_bg > total // 200, f"fail colour covers {fail_bg} of {total} pixels"
    assert pass_bg > total // 1000, f"pass colour covers {pass_bg} of {total} pixels"
    assert dark > total // 500, f"only {dark} dark (text) pixels"


def test_the_script_says_what_is_wrong(tmp_path, capsys) -> None:
    assert screenshot.main([str(tmp_path / "missing.html"), str(tmp_path / "x.png")]) == 2
    assert "is not a file" in capsys.readouterr().err


def test_both_answers_show_on_top_of_the_page(tmp_path) -> None:
    """An expected failure: the gate passes (green) and the verdict does not (red), both
    at the top of the page, where a reader looks first."""
    tests = [
        _test("t_b", "xfail", ["KIND-REJECTED"], failed="KIND-REJECTED", expected="KIND-REJECTED"),
        _test("t_a", "pass", ["KIND-ACCEPTED"]),
    ]
    entry = {"key": "KIND-REJECTED", "target": "requirement", "reason": "known", "link": None}
    doc = _results(tests, ["KIND-ACCEPTED", "KIND-REJECTED"], file="e.txt", entries=[entry])
    report = reports.build(doc, SUITE, RUN)
    assert report["gate"]["result"] == "pass" and report["verdict"] == "not conformant"
    reports.write(report, tmp_path)
    png = tmp_path / "top.png"
    screenshot.screenshot(tmp_path / "report.html", png, width=1200, height=300)
    with Image.open(png) as img:
        top = img.convert("RGB").get_flattened_data()
    green = sum(1 for p in top if p == (0x18, 0x64, 0x18))
    red = sum(1 for p in top if p == (0x9A, 0x15, 0x15))
    assert green > 50, f"the gate's green: {green} pixels"
    assert red > 50, f"the verdict's red: {red} pixels"
