"""The provider registry: the `llm` config block, provider entries, tool transport, hot-swap."""
