"""Provider-neutral LLM vocabulary: requests, completions, the provider protocol, profiles."""
