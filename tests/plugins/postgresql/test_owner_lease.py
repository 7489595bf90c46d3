"""Owner liveness on a shared database is the database's: a lease is an advisory lock held by
its process's own connection, seen alive from any other process (any host), and dead as soon
as that connection ends — released, killed, or cut by a server restart (then retaken by
`renew` within the grace a process that lost its own lease gives the others, so a restart
kills nobody)."""

from __future__ import annotations

import time
from typing import Any

from atomic_agent.turns import session_backend_kit
from tests.plugins.postgresql.pg_kit import raw, url_of


def _lease(database: Any, grace_s: float = 0.0) -> Any:
    from atomic_agent.plugins.postgresql.pg_owner_lease import PgOwnerLease

    return PgOwnerLease(url_of(database), session_backend_kit, grace_s=grace_s)


def test_a_live_owner_is_alive_to_every_other_process_and_dead_once_released(postgresql_database: Any):
    one, two = _lease(postgresql_database), _lease(postgresql_database)
    try:
        assert one.owner != two.owner
        assert one.is_alive(two.owner) and two.is_alive(one.owner) and one.is_alive(one.owner)
        assert not one.is_alive("never-started") and not one.is_alive(None)
        assert not one.is_alive("never-started")  # asking never takes a dead owner's lease for good
        two.release()
        assert not one.is_alive(two.owner) and not two.is_alive(two.owner)
    finally:
        one.release()
        two.release()


def test_an_owner_whose_connection_is_killed_is_dead_and_its_process_retakes_the_lease(postgresql_database: Any):
    one, two = _lease(postgresql_database), _lease(postgresql_database)
    try:
        with raw(postgresql_database) as conn:  # terminate, and wait for the backend to be gone
            conn.execute("select pg_terminate_backend(%s, 5000)", [two._conn.info.backend_pid])
        assert not one.is_alive(two.owner)  # what a SIGKILL or a lost host looks like to the fleet
        assert two.is_alive(one.owner)  # its next check reconnects, and takes its own lease again
        assert one.is_alive(two.owner)
    finally:
        one.release()
        two.release()


def test_a_lease_cut_by_a_server_restart_is_alive_within_the_grace_and_renewed(postgresql_database: Any):
    server, _name = postgresql_database
    grace = 0.5
    one, two = _lease(postgresql_database, grace), _lease(postgresql_database, grace)
    try:
        server.restart()  # both leases' connections are gone
        assert one.is_alive(two.owner)  # one takes its own lease again; two's is missing, within the grace
        time.sleep(grace + 0.1)
        two.renew()  # what two's takeover tick does each pass
        assert one.is_alive(two.owner)  # held again: never counted dead
        two.release()
        assert not one.is_alive(two.owner)  # one kept its connection since: a missing lock is a death
    finally:
        one.release()
        two.release()
