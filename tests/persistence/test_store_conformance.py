"""The conformance suite, run against every store implementation (see store_harness.HARNESSES)."""

from __future__ import annotations

from tests.persistence.conformance import StoreConformance


class TestStoreConformance(StoreConformance):
    pass
