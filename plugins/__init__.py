"""Built-in plugins: each sub-package is one plugin, registered by entry point in pyproject.toml."""
