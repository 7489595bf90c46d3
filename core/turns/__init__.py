"""The durable turn lifecycle: admission ledger, writer generations, stop, steering queue, recovery."""
