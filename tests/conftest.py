"""The project's own tests.  ``pytester`` runs the suite's plugin in isolated sessions."""

pytest_plugins = ["pytester"]
