"""acl-conformance: adapters."""
