"""The command line: ``acl-conformance`` and its subcommands (run, selfcheck,
replay, reproducer, ...), the report folder's staging, and which suite made a report.
It is the top: nothing in the package imports it.

May import: acl_conformance, reference_impl, adapters, reports, conformance.harness,
conformance.authoring, conformance.gating, conformance.session, conformance.traces.
"""
