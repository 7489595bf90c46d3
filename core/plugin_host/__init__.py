"""Discovering, selecting, loading and reporting plugins."""
