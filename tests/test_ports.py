"""tests/ports.py: the ports the tests' clusters bind."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from ports import _first_ephemeral, free_port

PICK = "import ports; print(' '.join(str(ports.free_port()) for _ in range(50)))"


def picked(worker: str) -> set[int]:
    env = {"PYTEST_XDIST_WORKER": worker, "PYTEST_XDIST_WORKER_COUNT": "2", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", PICK], cwd=Path(__file__).parent, env=env, capture_output=True,
                         text=True, check=True).stdout
    return {int(port) for port in out.split()}


def test_ports_are_distinct_free_and_below_the_range_the_kernel_gives_connections():
    ports = [free_port() for _ in range(20)]
    assert len(set(ports)) == 20
    assert all(10000 <= port < _first_ephemeral() for port in ports)
    with socket.socket() as server:
        server.bind(("127.0.0.1", ports[-1]))


def test_two_xdist_workers_never_get_the_same_port():
    first, second = picked("gw0"), picked("gw1")
    assert len(first) == len(second) == 50
    assert not first & second
    assert max(first) < min(second)
