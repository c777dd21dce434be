"""acl-conformance: reports."""
