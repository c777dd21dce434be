"""What the tests of one run share: which requirements have failed, and who owns each failure.

A run's tests are spread over pytest-xdist workers, so the state lives in a directory
(created by the controller, handed to the workers): one file per failed requirement,
and one per failure identity naming the test that found it first.  Files are created
atomically, so two workers that hit the same failure at once agree on its owner.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

HUNG_REREAD_SECONDS = 0.5
"""How long the recorded hangs are trusted as read (see ``RunState.hang``)."""


class RunState:
    """The run's failed requirements and failure owners (a directory shared by workers)."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        (self.dir / "failed").mkdir(parents=True, exist_ok=True)
        (self.dir / "owners").mkdir(parents=True, exist_ok=True)
        (self.dir / "hung").mkdir(parents=True, exist_ok=True)
        self._hung_dir = str(self.dir / "hung")
        self._hungs: dict[str, dict[str, str]] = {}
        self._hung_stamp = -1
        self._hung_read = 0.0

    @classmethod
    def create(cls) -> RunState:
        """A new state in a temporary directory, removed when the process that made it
        exits (every pytest run that loads the plugin makes one; pytest-xdist's workers
        use the controller's)."""
        directory = tempfile.mkdtemp(prefix="acl-conformance-run-")
        # at exit, not at pytest_unconfigure: a run inside a test process (pytester) is
        # looked at after it ends
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        return cls(directory)

    def mark_failed(self, requirement: str, also: Iterable[str] = ()) -> None:
        """A failure charged to ``requirement`` that could equally be charged to ``also``."""
        others = [r for r in also if r != requirement]
        # Requirement ids are letters, digits and hyphens: a comma separates them.
        (self.dir / "failed" / ",".join([requirement, *others])).touch()

    def failed(self) -> frozenset[str]:
        """The requirements that have failed so far in the run (by any worker): those a
        failure cited with no other reading, and those an ambiguous failure cited unless
        one of its other readings has failed clearly (the report charges it there too, see
        reports.aggregate; masking the cited one would stop tests that check it for
        nothing)."""
        names = [n.split(",") for n in os.listdir(self.dir / "failed")]
        clear = {n[0] for n in names if len(n) == 1}
        return frozenset(
            clear | {n[0] for n in names if len(n) > 1 and not clear.intersection(n[1:])}
        )

    def owner(self, identity: str) -> str | None:
        """The test that claimed failure ``identity``, or None if none has (claims nothing)."""
        try:
            return (self.dir / "owners" / _name(identity)).read_text() or None
        except FileNotFoundError:
            return None

    def claim(self, identity: str, test: str) -> str:
        """The test that owns failure ``identity``: ``test`` if it is the first to claim it."""
        path = self.dir / "owners" / _name(identity)
        fd, tmp = tempfile.mkstemp(dir=self.dir / "owners", prefix=".tmp-")
        with os.fdopen(fd, "w") as f:
            f.write(test)
        try:
            os.link(tmp, path)  # atomic: exactly one claimant creates the name
            return test
        except FileExistsError:
            return path.read_text() or test
        finally:
            os.unlink(tmp)

    def mark_hung(self, situation: str, hang: dict[str, str]) -> dict[str, str]:
        """A call in ``situation`` did not return (``hang``: the requirement it is charged
        to, the call in C form, why, the test); the hang that stands for the situation (the
        first one recorded, when two workers hung on it at once)."""
        path = self.dir / "hung" / _name(situation)
        fd, tmp = tempfile.mkstemp(dir=self.dir / "hung", prefix=".tmp-")
        with os.fdopen(fd, "w") as f:
            json.dump({**hang, "situation": situation}, f)
        try:
            os.link(tmp, path)  # atomic: exactly one hang stands for the situation
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        self._hung_stamp = -1  # read them again: this one is there now
        return self.hang(situation) or hang

    def hang(self, situation: str) -> dict[str, str] | None:
        """The hang recorded for ``situation`` (see :meth:`mark_hung`), or None.  Asked
        before every call: the recorded hangs are read again only when the folder changed,
        or half a second after they were last read (a hang another worker records in the
        meantime is met at most once more, never missed for long)."""
        folder = self._hung_dir
        stamp = os.stat(folder).st_mtime_ns
        now = time.monotonic()
        if stamp != self._hung_stamp or now - self._hung_read > HUNG_REREAD_SECONDS:
            hangs: dict[str, dict[str, str]] = {}
            for name in os.listdir(folder):
                if name.startswith("."):
                    continue  # one being written
                try:
                    with open(os.path.join(folder, name)) as f:
                        hangs[name] = json.load(f)
                except (FileNotFoundError, ValueError):
                    continue
            self._hungs, self._hung_stamp, self._hung_read = hangs, stamp, now
        return self._hungs.get(_name(situation))


def _name(identity: str) -> str:
    """The file name of failure ``identity`` under ``owners``."""
    return hashlib.sha1(identity.encode()).hexdigest()[:20]
