"""Two fleets with different configs pointed at one database are detected and reported: each
host records its config fingerprint (config.json without the storage block) when its backend
opens; a host whose config differs from one that used the database lately is warned on start
and by `doctor`. Hosts of one fleet (same config, storage block aside) are not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_agent.plugins.postgresql.doctor_findings import _fleet_findings
from tests.plugins.postgresql.pg_kit import backend_on, url_of


def _state(root: Path, name: str, config: dict[str, Any]) -> Path:
    state = root / name
    state.mkdir()
    (state / "config.json").write_text(json.dumps(config))
    return state


def _opened(database: Any, state: Path) -> Any:
    backend = backend_on(database, state_dir=state)
    backend.open_store().close()
    return backend


def test_a_host_with_another_config_on_the_same_database_is_reported(tmp_path: Path, postgresql_database: Any,
                                                                     capsys: Any):
    first = _state(tmp_path, "fleet-a", {"agent": {"approvalLevel": 2}, "storage": {"url": "postgresql://a/x"}})
    same = _state(tmp_path, "fleet-a-2", {"agent": {"approvalLevel": 2}, "storage": {"url": "postgresql://b/x"}})
    other = _state(tmp_path, "fleet-b", {"agent": {"approvalLevel": 4}})
    backends = [_opened(postgresql_database, first), _opened(postgresql_database, same)]
    try:
        assert [b.config_disagreement for b in backends] == [None, None]  # one fleet: the storage block may differ
        backends.append(_opened(postgresql_database, other))
        warning = backends[2].config_disagreement
        assert warning is not None and "fleet-a" in warning and "two fleets" in warning.lower()
        assert "Two fleets with different configs" in capsys.readouterr().err
        [finding] = _fleet_findings(url_of(postgresql_database), other)
        assert finding.level == "warn" and "fleet-a-2" in finding.detail
        [agreeing] = _fleet_findings(url_of(postgresql_database), first)
        assert agreeing.level == "warn" and "fleet-b" in agreeing.detail  # the first fleet hears of it too
    finally:
        for backend in backends:
            backend.close()


def test_hosts_of_one_fleet_are_not_reported(tmp_path: Path, postgresql_database: Any):
    hosts = [_state(tmp_path, f"host-{i}", {"agent": {"approvalLevel": 3}}) for i in range(3)]
    backends = [_opened(postgresql_database, state) for state in hosts]
    try:
        assert [b.config_disagreement for b in backends] == [None, None, None]
        [finding] = _fleet_findings(url_of(postgresql_database), hosts[0])
        assert finding.level == "ok"
    finally:
        for backend in backends:
            backend.close()
