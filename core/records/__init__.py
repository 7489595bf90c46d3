"""Typed records that registration hooks return (the public vocabulary of plugins)."""
