"""The cross-provider fallback chain: a per-session circuit breaker over configured providers."""
