"""The session: what lives for a whole run.  The run's shared state (``Suite``: the
backend, the profile, the backend instances), a test's attempts, the Hypothesis settings profiles,
the adapter's options, the supervision of child processes and the command line that runs
the suite in a process of its own.

May import: reference_impl, adapters, reports, conformance.harness, conformance.gating.
"""
