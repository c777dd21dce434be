"""acl-conformance: conformance."""
