"""A real PostgreSQL server for tests: Debian's binaries, initdb and pg_ctl as an
unprivileged user (PostgreSQL refuses to run as root, and CI runs as root) into a fresh
temporary directory, listening on 127.0.0.1 only, on a free port.

The cluster's superuser has a password (scram-sha-256 on loopback), so the tests go through
the same URL-plus-password path a deployment does. fsync is off: the tests pin the protocol
(what is committed before what is acknowledged), not the disk.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs

PG_BIN_DIRS = (Path("/usr/lib/postgresql/15/bin"), Path("/usr/local/bin"), Path("/usr/bin"))
SERVER_USER = "nobody"  # who runs the server when the tests run as root
ROLE = "agent"
START_TIMEOUT_S = 60


class PostgresUnavailableError(RuntimeError):
    """The PostgreSQL binaries are missing or the server would not start; the message says why."""


@attrs.frozen
class PostgresServer:
    """A running test cluster: connect as ROLE with `password` to 127.0.0.1:`port`."""

    port: int
    password: str
    data_dir: Path
    bin_dir: Path
    run_as: str | None  # the user pg_ctl runs as (None: this process's user)
    fsync: bool = False  # True for benchmarks: commits wait for the disk, as SQLite's FULL does

    def url(self, database: str = "postgres", *, with_password: bool = False) -> str:
        secret = f":{self.password}" if with_password else ""
        return f"postgresql://{ROLE}{secret}@127.0.0.1:{self.port}/{database}"

    def pg_ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run_as(self.run_as, [str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), *args], check=check)

    def stop(self, mode: str = "fast") -> None:
        self.pg_ctl("stop", "-m", mode, "-w", check=False)

    def restart(self) -> None:
        self.stop()
        self.start()

    def start(self) -> None:
        log = self.data_dir.parent / "server.log"
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.data_dir} "
                   "-c synchronous_commit=on -c max_connections=200 "
                   + ("-c fsync=on" if self.fsync else "-c fsync=off -c full_page_writes=off"))
        done = self.pg_ctl("start", "-w", "-t", str(START_TIMEOUT_S), "-l", str(log), "-o", options, check=False)
        if done.returncode != 0:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise PostgresUnavailableError(f"pg_ctl start failed ({done.stderr.strip()}); server log:\n{tail}")

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)


def find_bin_dir() -> Path:
    for candidate in PG_BIN_DIRS:
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    raise PostgresUnavailableError(
        "PostgreSQL's initdb and pg_ctl were not found in " + ", ".join(map(str, PG_BIN_DIRS))
        + "; install the Debian package `postgresql` (./scripts/system-packages does)")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_as(user: str | None, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, user=user, capture_output=True, text=True, check=False,
                          env={**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}, cwd="/")
    if check and done.returncode != 0:
        raise PostgresUnavailableError(f"{Path(argv[0]).name} failed ({done.returncode}): "
                                       f"{(done.stderr or done.stdout).strip()[-2000:]}")
    return done


def start_postgres(*, fsync: bool = False) -> PostgresServer:
    """initdb into a new temporary directory and start the server; the caller calls `remove()`.
    `fsync=False` (tests) skips waiting for the disk; benchmarks pass True."""
    bin_dir = find_bin_dir()
    run_as = SERVER_USER if os.geteuid() == 0 else None
    top = Path(tempfile.mkdtemp(prefix="atomic-agent-pg-", dir="/tmp"))
    data_dir = top / "data"
    password = os.urandom(12).hex()
    pwfile = top / "pwfile"
    pwfile.write_text(password + "\n")
    if run_as is not None:
        entry = pwd.getpwnam(run_as)
        for path in (top, pwfile):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    _run_as(run_as, [str(bin_dir / "initdb"), "-D", str(data_dir), "-U", ROLE, f"--pwfile={pwfile}",
                     "--auth=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
    pwfile.unlink()
    server = PostgresServer(free_port(), password, data_dir, bin_dir, run_as, fsync)
    server.start()
    return server


@contextmanager
def benchmark_postgres(what: str = "postgresql") -> Iterator[PostgresServer | None]:
    """A benchmark's server (fsync on, as a user's would be), removed when the block ends; None,
    after a line saying `what` was not measured and why, where PostgreSQL cannot start here."""
    try:
        server = start_postgres(fsync=True)
    except PostgresUnavailableError as exc:
        print(f"{what}: not measured ({exc})")
        yield None
        return
    try:
        yield server
    finally:
        server.remove()
