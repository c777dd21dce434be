"""Traces and the reproducer: a failing test's calls saved (trace), checked against
their schema, replayed against a backend, and written out as a standalone C program.

May import: acl_conformance, reference_impl, adapters, conformance.harness,
conformance.authoring, conformance.session.
"""
