"""Gating: expectations, skips and flakes files, and the results document of one
pytest run that the gate and the reports read.  Whatever decides whether a run passes
its gate, from files a vendor keeps, belongs here.

May import: reference_impl, reports.
"""
