"""Composing the runtime: boot sequence, runtime view, turn entry points."""
