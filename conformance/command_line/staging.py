"""A report folder that holds one run's report, whole, or the previous one.

A run writes everything (results.json, traces, report.json/md/html, junit.xml)
into a *staging* folder beside the report folder, and only a run that finished
moves it into place: the report files and traces of the folder are replaced
together, never mixed with an older run's, and an interrupted run leaves the
previous complete report (or nothing).  Other files in the folder are left as they
are.  The folder is checked for writing before the suite starts, so that an
unwritable one is said at once, not after the whole run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

REPORT_ENTRIES = ("report.json", "report.md", "report.html", "junit.xml", "results.json", "traces")
"""What a run writes into its report folder: what a new report replaces."""


class ReportDirError(Exception):
    """The report folder cannot be used; the message is one line."""


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def prepare(report_dir: Path, flag: str = "--report-dir") -> Path:
    """Check that ``report_dir`` can be written (made if missing, a probe file created and
    removed) and make the staging folder beside it; ReportDirError (one line) if not."""
    if report_dir.exists() and not report_dir.is_dir():
        raise ReportDirError(f"{flag} {report_dir}: exists and is not a directory")
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportDirError(f"{flag} {report_dir}: cannot be made ({_why(exc)})") from None
    target = report_dir.resolve()
    probe = target / f".acl-conformance-probe-{os.getpid()}"
    try:
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise ReportDirError(f"{flag} {report_dir}: cannot be written ({_why(exc)})") from None
    try:
        # beside the folder, on the same filesystem: moving it in is a rename
        return Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    except OSError:
        # a folder we may write in, under a parent we may not: stage inside it
        try:
            return Path(tempfile.mkdtemp(prefix=".acl-conformance-partial-", dir=target))
        except OSError as exc:
            raise ReportDirError(f"{flag} {report_dir}: cannot be written ({_why(exc)})") from None


def relocate(doc: Any, staging: Path, report_dir: Path) -> Any:
    """``doc`` with every path into ``staging`` made a path into ``report_dir`` (where the
    files will be once the report is in place)."""
    old, new = str(staging), str(report_dir.resolve())
    if isinstance(doc, str):
        return new + doc[len(old) :] if doc.startswith(old) else doc
    if isinstance(doc, list):
        return [relocate(v, staging, report_dir) for v in doc]
    if isinstance(doc, dict):
        return {k: relocate(v, staging, report_dir) for k, v in doc.items()}
    return doc


def commit(staging: Path, report_dir: Path, entries: tuple[str, ...] = REPORT_ENTRIES) -> None:
    """Move the staged report into ``report_dir``, replacing the old report's ``entries``
    (files and traces; moved aside first, removed once the new ones are in place)."""
    target = report_dir.resolve()
    aside = Path(tempfile.mkdtemp(prefix=".acl-conformance-previous-", dir=staging))
    moved_aside: list[str] = []
    moved_in: list[str] = []
    try:
        for name in entries:
            if os.path.lexists(target / name):
                os.replace(target / name, aside / name)
                moved_aside.append(name)
        # only the report's own entries: what else pytest left (Hypothesis' cache) goes
        for name in entries:
            entry = staging / name
            if not os.path.lexists(entry):
                continue
            os.replace(entry, target / name)
            moved_in.append(name)
    except OSError as exc:
        # put the previous report back as it was
        for name in moved_in:
            _remove(target / name)
        for name in moved_aside:
            os.replace(aside / name, target / name)
        raise ReportDirError(
            f"--report-dir {report_dir}: cannot be written ({_why(exc)})"
        ) from None
    discard(staging)


def discard(staging: Path) -> None:
    """Remove the staging folder and what is in it."""
    shutil.rmtree(staging, ignore_errors=True)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)
