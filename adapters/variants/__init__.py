"""The suite's proof of power: deliberately wrong and deliberately different backends.

Each *mutant* is the bundled simulator with one realistic bug, and names the
requirement that should catch it; the suite must fail on it, citing that
requirement.  Each *legal variant* behaves differently from the default
simulator in a way the spec allows; the suite must pass on it.  A variant may
be a mutant under one profile and legal under the other (CANN's exact codes
are not the text's).

Run one with ``--acl-adapter acl_conformance.adapters.variants:variant
--acl-adapter-option name=<name>``.
"""

from .catalogue import BY_NAME
from .catalogue import CATALOGUE
from .catalogue import Variant
from .catalogue import variant

__all__ = ["BY_NAME", "CATALOGUE", "Variant", "variant"]
