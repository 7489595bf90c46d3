"""Embedding providers: a registry symmetric to the text one, with typed, never-fatal errors."""
