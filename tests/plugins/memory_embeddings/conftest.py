from tests.plugins.memory_fabric.conftest import deterministic_session_ids, frozen_clock  # noqa: F401  (fixtures)
