"""blind23: a blind power measure for acl-conformance (life-cycle bugs and legal oddities)."""
