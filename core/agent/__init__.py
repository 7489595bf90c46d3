"""The agent loop: steps, batches, loop detection."""
