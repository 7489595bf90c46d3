"""Durable persistence: append-only record streams plus a sorted key-value space, behind a
protocol (store, notifier, clock, owner leases, serializer) with a SQLite implementation and an
in-memory reference implementation that one conformance suite holds to the same semantics.

Import the concrete modules (`sqlite_store`, `memory_store`, `store_protocol`, ...) directly;
this package module stays empty so importing it costs nothing.
"""
