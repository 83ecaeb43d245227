"""TensorFlow's servers in a side listen on 127.0.0.1 only, never on every interface.

TensorFlow's GrpcServer listens on "0.0.0.0:PORT" whatever host its cluster names (grpc_server_lib.cc), which
would open a side's in-process cluster to the network while it runs. TensorFlow's libraries call the C library's
``bind`` through their global offset tables: each entry holding ``bind`` is pointed at a function that turns a
wildcard address into the loopback one (the IPv6 wildcard, which gRPC binds dual-stack, into ::ffff:127.0.0.1)
before it calls ``bind``. The sockets Python itself opens are left alone. Linux only (/proc/self/maps).

Imported by the sides, possibly under another interpreter: standard library only.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import socket
import struct
from collections.abc import Iterator

# Where a sockaddr_in / sockaddr_in6 holds its address, and the loopback address that replaces the wildcard.
LOOPBACK = {socket.AF_INET: (4, socket.inet_aton("127.0.0.1")),
            socket.AF_INET6: (8, socket.inet_pton(socket.AF_INET6, "::ffff:127.0.0.1"))}
PERMISSIONS = {"r": mmap.PROT_READ, "w": mmap.PROT_WRITE}
BIND = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, use_errno=True)

_installed: list = []  # the function the offset tables point at: it must live as long as the process


class LoopbackUnavailable(RuntimeError):
    pass


def listen_on_loopback_only(library_folder: str) -> None:
    """The servers of the libraries loaded from ``library_folder`` bind the loopback address instead of the wildcard."""
    if _installed:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    bind = libc.bind
    bind.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32)

    def bind_loopback(fd: int, address: int, length: int) -> int:
        data = bytearray(ctypes.string_at(address, length))
        (family,) = struct.unpack_from("=H", data)
        if family in LOOPBACK:
            start, loopback = LOOPBACK[family]
            if data[start:start + len(loopback)] == bytes(len(loopback)):
                data[start:start + len(loopback)] = loopback
        copy = (ctypes.c_char * length).from_buffer(data)
        return bind(fd, ctypes.addressof(copy), length)

    replacement = BIND(bind_loopback)
    slots = list(offset_table_slots(ctypes.cast(bind, ctypes.c_void_p).value, library_folder))
    if not slots:
        raise LoopbackUnavailable(f"no library in {library_folder} calls bind through an offset table")
    for slot, protection in slots:
        write_protected(libc, slot, ctypes.cast(replacement, ctypes.c_void_p).value, protection)
    _installed.append(replacement)


def offset_table_slots(function: int, library_folder: str) -> Iterator[tuple[int, int]]:
    """The aligned words holding ``function`` in the data of the libraries loaded from ``library_folder``, each
    with the protection of its page."""
    folder, needle = os.path.join(library_folder, ""), struct.pack("@P", function)
    try:
        with open("/proc/self/maps") as maps:
            lines = maps.read().splitlines()
    except OSError as error:
        raise LoopbackUnavailable(f"cannot read the process's memory map: {error}") from None
    for line in lines:
        fields = line.split(maxsplit=5)  # start-end perms offset device inode path
        # The offset tables are data, never executable, and never in the first segment (headers, symbol tables).
        if len(fields) < 6 or not fields[5].startswith(folder) or "x" in fields[1] or int(fields[2], 16) == 0:
            continue
        start, end = (int(bound, 16) for bound in fields[0].split("-"))
        data = ctypes.string_at(start, end - start)
        protection = sum(PERMISSIONS.get(flag, 0) for flag in fields[1])
        found = data.find(needle)
        while found != -1:
            if found % len(needle) == 0:
                yield start + found, protection
            found = data.find(needle, found + 1)


def write_protected(libc, address: int, value: int, protection: int) -> None:
    """Write the pointer ``value`` at ``address``, on a page the loader may have made read-only."""
    page = address - address % mmap.PAGESIZE
    if libc.mprotect(page, mmap.PAGESIZE, protection | mmap.PROT_WRITE) != 0:
        raise LoopbackUnavailable(f"cannot write the offset table: {os.strerror(ctypes.get_errno())}")
    ctypes.c_void_p.from_address(address).value = value
    libc.mprotect(page, mmap.PAGESIZE, protection)
