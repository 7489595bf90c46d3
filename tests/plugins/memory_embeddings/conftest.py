from tests.plugins.memory_plugins.conftest import deterministic_session_ids, frozen_clock  # noqa: F401  (fixtures)
