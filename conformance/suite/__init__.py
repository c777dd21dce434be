"""The conformance suite: one test module per area of the spec.

Run it with ``acl-conformance run`` or ``pytest --pyargs acl_conformance.conformance.suite``
(options ``--acl-adapter``, ``--acl-profile``, ...; see ``pytest --help``).

May import: reference_impl, adapters, conformance.harness, conformance.authoring,
conformance.machines, conformance.session, conformance.gating.
"""
