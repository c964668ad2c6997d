"""The rule-graph DSL, its index and evaluation, signal promotion and RQ job functions
(built by the rules issue)."""
