"""The store conformance suite: one set of cases every Store implementation must pass.

A backend joins by adding a harness to `store_harness.HARNESSES`; `test_store_conformance.py`
runs `StoreConformance` once per harness. Cases that need a second OS process or a process
kill run only for harnesses that can open their storage from another process.
"""

from __future__ import annotations

from tests.persistence.conformance_helpers import SimulatedCrash, needs_processes
from tests.persistence.conformance_key_values import KeyValueConformance
from tests.persistence.conformance_owners import OwnerConformance
from tests.persistence.conformance_streams import StreamConformance
from tests.persistence.conformance_transactions import TransactionConformance

__all__ = ["SimulatedCrash", "StoreConformance", "needs_processes"]


class StoreConformance(TransactionConformance, StreamConformance, KeyValueConformance, OwnerConformance):
    """Every case, for one implementation."""
