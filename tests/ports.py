"""Free ports for the tests' clusters of processes, taken below the kernel's ephemeral range.

portpicker asks the kernel for a free port, from the range the kernel also gives outgoing connections their local
ports. A task binds its port seconds after the pick (it imports TensorFlow first); on a loaded machine a gRPC
connection of another test can take the port meanwhile, and the task dies at start-up. Ports below that range are
never given to connections; each xdist worker walks a slice of its own, so no two tests share one.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

LOWEST = 10000


def _first_ephemeral() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _walk():
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    size = (_first_ephemeral() - LOWEST) // max(workers, worker + 1)
    first = LOWEST + worker * size
    offset = os.getpid() % size  # another session soon after does not retry this one's ports first
    while True:
        for step in range(size):
            yield first + (offset + step) % size


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


_ports = _walk()


def free_port() -> int:
    """A port no other test of this run is given, free on 127.0.0.1 now and outside the kernel's ephemeral range."""
    return next(port for port in _ports if _free(port))
