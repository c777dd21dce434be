"""The harness: every call goes to the backend and to the model, and must agree.

What one harness keeps of a test: the handles and addresses it made, its host memory, its
stream gates, the variables' starting contents, the calls made and their judgements, the
failures it raised and how they are charged, and how the backend is left clean (teardown)
or brought back to a known state for the next test (reset).  The run's shared record of
failed requirements (runstate) lives here because the harness consults it.  A module that
makes or judges calls for one test belongs here.

May import: reference_impl, adapters.
"""
