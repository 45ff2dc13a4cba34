"""The rendezvous of init_process_group: every process connects to rank 0's TCP server at
MASTER_ADDR:MASTER_PORT within the timeout, and rank 0 hands out the port of jax's
coordination service once all have joined. jax.distributed.initialize aborts the whole
process when a peer never comes (a fatal C++ check, not an exception); meeting here first
turns a missing peer into torch's DistStoreError/DistNetworkError within the timeout."""
import socket
import struct
import time

from ._errors import DistNetworkError, DistStoreError


def _free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _recv_int(conn):
    data = b""
    while len(data) < 4:
        chunk = conn.recv(4 - len(data))
        if not chunk:
            raise ConnectionError("peer closed")
        data += chunk
    return struct.unpack("!i", data)[0]


def rendezvous(host, port, rank, world_size, timeout):
    """Meet all `world_size` processes; returns the port of jax's coordinator on `host`."""
    if rank == 0:
        return _serve(host, port, world_size, timeout)
    return _join(host, port, rank, timeout)


def _serve(host, port, world_size, timeout):
    coordinator = _free_port(host)
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind((host, port))
    except OSError as e:
        server.close()
        raise DistNetworkError(f"The server socket has failed to listen on any local network "
                               f"address. port: {port}, useIpv6: false, code: {-e.errno}, "
                               f"name: {e.strerror}, message: {e.strerror}") from None
    server.listen(world_size)
    deadline = time.monotonic() + timeout
    peers = {}
    try:
        while len(peers) < world_size - 1:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DistStoreError(f"Timed out after {round(timeout)} seconds waiting for "
                                     f"clients. {len(peers) + 1}/{world_size} clients joined.")
            server.settimeout(left)
            try:
                conn, _ = server.accept()
            except socket.timeout:
                continue
            conn.settimeout(max(deadline - time.monotonic(), 0.1))
            try:
                peers[_recv_int(conn)] = conn
            except (OSError, ConnectionError):
                conn.close()
        for conn in peers.values():
            conn.sendall(struct.pack("!i", coordinator))
        return coordinator
    finally:
        for conn in peers.values():
            conn.close()
        server.close()


def _join(host, port, rank, timeout):
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = socket.create_connection((host, port), timeout=1.0)
            break
        except OSError:
            if time.monotonic() >= deadline:
                raise DistNetworkError(f"The client socket has timed out after "
                                       f"{round(timeout * 1000)}ms while trying to connect to "
                                       f"({host}, {port}).") from None
            time.sleep(0.05)
    with conn:
        conn.sendall(struct.pack("!i", rank))
        conn.settimeout(max(deadline - time.monotonic(), 0.1))
        try:
            return _recv_int(conn)
        except (OSError, ConnectionError):
            raise DistStoreError(f"Timed out after {round(timeout)} seconds waiting for the "
                                 f"other ranks to join the rendezvous at ({host}, {port}).") \
                from None

