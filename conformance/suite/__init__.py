"""The conformance suite: one test module per area of the spec.

Run it with ``acl-conformance run`` or ``pytest --pyargs acl_conformance.conformance.suite``
(options ``--acl-adapter``, ``--acl-profile``, ...; see ``pytest --help``).
"""
