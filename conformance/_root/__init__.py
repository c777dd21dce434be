"""acl-conformance: a conformance suite for the ACL runtime call aclrtMemcpyToSymbolAsync.

The installed packages: ``acl_conformance.reference_impl`` (the oracle),
``acl_conformance.adapters`` (the contract and the backends),
``acl_conformance.conformance`` (the suite and the command line) and
``acl_conformance.reports``.  This file is the namespace's root (kept in the
repository as conformance/_root/), so that test modules of the installed suite
import under their full names whatever pytest's import mode.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("acl-conformance")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"
