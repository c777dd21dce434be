"""The suite and the command line, in folders by concern (each folder's docstring says
what it is for and what it may import; tests/test_folders.py holds them to it):

- ``harness``: every call to the backend and the model, judged; what a test keeps;
- ``authoring``: what test authors call (ops, defects);
- ``machines``: the stateful Hypothesis machines;
- ``suite``: the conformance tests, one module per area of the spec;
- ``session``: what lives for a whole run (Suite, attempts, settings, child processes);
- ``gating``: expectations, skips and flakes files, and the results document;
- ``traces``: saved traces, replay and the C reproducer;
- ``plugin``: the pytest plugin;
- ``command_line``: ``acl-conformance`` and its subcommands.
"""
