"""acl-conformance: a conformance suite for the ACL runtime call aclrtMemcpyToSymbolAsync.

The packages: ``acl_conformance.reference_impl`` (the oracle),
``acl_conformance.adapters`` (the contract and the backends),
``acl_conformance.conformance`` (the suite and the command line) and
``acl_conformance.reports``.  ``acl_conformance.X.Y`` is the repository's
``X/Y.py``: this folder holds only the root of the namespace, and setup.py's
``PACKAGE_DIRS`` is the one mapping of package names to folders.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version
from pathlib import Path

try:
    __version__ = version("acl-conformance")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

# In a source checkout the subpackages are the checkout's top-level folders, so that
# ``import acl_conformance.conformance`` works there without installing; installed,
# they sit beside this file and the parent folder is not a checkout.
_checkout = Path(__file__).resolve().parent.parent
if (_checkout / "pyproject.toml").is_file() and (_checkout / "reference_impl").is_dir():
    __path__.append(str(_checkout))
