"""The llama-server plugin: the local provider kind and the `llama` / `models` commands."""
