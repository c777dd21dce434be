"""What test authors use: short forms of the calls in the spec's words (ops), the
table of invalid arguments (defects), the fixture pattern.  A helper a test module calls
belongs here.

May import: reference_impl, adapters, conformance.harness.
"""
