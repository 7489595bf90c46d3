"""Shared storage primitives (SQLite transactions)."""
