"""The finds of a bug hunt: each failure it found, saved as ``acl-conformance run`` saves a
failure (its trace, a C reproducer), one folder per failure identity.

``DIR/<slug>/`` holds ``identity`` (the failure identity, one line), ``trace.json`` (the
trace file, replayable with ``acl-conformance replay``) and ``reproducer.c`` (the
standalone C program).  A failure whose identity is saved already replaces the saved one
only when its trace is shorter: many processes (and hosts, on shared storage) may save
the same bug; one folder is kept, with the smallest trace any of them found.  Files are
written under a temporary name and renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import reproducer
from . import trace

TRACE = "trace.json"
IDENTITY = "identity"
REPRODUCER = "reproducer.c"
FOUND = "found"
"""When the identity was first saved (seconds since the epoch, one line)."""


@dataclass(frozen=True)
class Find:
    """One saved find."""

    identity: str
    folder: Path

    @property
    def found(self) -> float | None:
        """When it was first saved (seconds since the epoch), if recorded."""
        try:
            return float((self.folder / FOUND).read_text())
        except (OSError, ValueError):
            return None

    @property
    def trace_file(self) -> Path:
        return self.folder / TRACE

    def load(self) -> trace.Trace:
        """Its trace (TraceError when the file cannot be used)."""
        return trace.load(self.trace_file)


def folder_name(identity: str) -> str:
    """The folder of failure ``identity``: readable, and unique by a hash of the identity."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", identity).strip("-")[:60]
    return f"{slug}-{hashlib.sha1(identity.encode()).hexdigest()[:10]}"


def _write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _saved_calls(folder: Path) -> int | None:
    try:
        doc = json.loads((folder / TRACE).read_text(encoding="utf-8"))
        return len(doc["calls"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(root: Path, identity: str, doc: dict[str, Any]) -> Path | None:
    """Save the trace document ``doc`` of a failure of ``identity`` under ``root``; its
    folder, or None when a find of that identity with no more calls is saved already."""
    folder = root / folder_name(identity)
    folder.mkdir(parents=True, exist_ok=True)
    saved = _saved_calls(folder)
    if saved is not None and saved <= len(doc.get("calls") or []):
        return None
    text = json.dumps(doc, indent=1)
    try:
        source: str | None = reproducer.generate(trace.Trace.from_json(doc, str(folder / TRACE)))
    except (reproducer.ReproducerError, trace.TraceError):
        source = None  # the trace is still worth keeping: replay reads it
    if not (folder / FOUND).exists():
        _write(folder / FOUND, f"{time.time()}\n")
    _write(folder / IDENTITY, identity + "\n")
    _write(folder / TRACE, text)
    if source is not None:
        _write(folder / REPRODUCER, source)
    return folder


def load_all(root: Path) -> list[Find]:
    """The finds saved under ``root``, by identity (folders without both files are skipped:
    one being written)."""
    out: list[Find] = []
    if not root.is_dir():
        return out
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            identity = (folder / IDENTITY).read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if identity and (folder / TRACE).is_file():
            out.append(Find(identity, folder))
    return sorted(out, key=lambda f: f.identity)
