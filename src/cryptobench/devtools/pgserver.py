"""A real PostgreSQL server for the tests and bench/lab_scale, started in a temporary directory
(Debian's `postgresql` package: initdb and pg_ctl), listening on 127.0.0.1 only, trust
authentication for one role, and stopped when they end. As root (CI), the server runs as the
`postgres` user the package creates, since PostgreSQL refuses to run as root. A server that cannot
start fails the test that needs it: it is never skipped. A developer tool, not a command."""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError("PostgreSQL's server programs are not installed (/usr/lib/postgresql/*/bin/pg_ctl): "
                           "./setup.sh installs Debian's postgresql package")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self):
        self.bin = _bin_dir()
        self.home = Path(tempfile.mkdtemp(prefix="cb-pg-"))
        self.data = self.home / "data"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.home, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "cryptobench", "--no-locale", "-E", "UTF8")
        self.start()

    def start(self) -> None:
        """Start the server (again, after `halt`: the same data, the same port)."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.home / "log"), "-w", "-t", "60",
                  "-o", f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.home}", "start")

    def halt(self) -> None:
        """Stop the server as an administrator's restart does (`pg_ctl stop -m fast`: every
        connection is dropped), keeping its data for `start`."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def _run(self, program: str, *args: str) -> None:
        cmd = [str(self.bin / program), *args]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            log = (self.home / "log").read_text() if (self.home / "log").exists() else ""
            raise RuntimeError(f"{program} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}\n{log[-800:]}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://cryptobench@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new, empty database on the server; returns its URL."""
        import psycopg
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():       # not halted already
                self.halt()
        finally:
            shutil.rmtree(self.home, ignore_errors=True)
