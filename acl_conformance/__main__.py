"""``python -m acl_conformance``: the ``acl-conformance`` command."""

from __future__ import annotations

import sys

from acl_conformance.conformance.command_line.cli import main

if __name__ == "__main__":
    sys.exit(main())
