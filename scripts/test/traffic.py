#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Network traffic over loopback, in the guest, while rslub backs the skb caches.

   traffic.py STOPFILE [tcp] [unix]
   traffic.py --kick

Each kind runs in its own process until STOPFILE exists: a client sends messages of
varying sizes (64 B to 64 KiB) to an echo server and checks that every byte comes back
unchanged; the processes are not pinned, so skbs are allocated on one CPU and freed on
another. TCP goes through 127.0.0.1 (the backlog NAPI and TCP's deferred frees), unix
through a stream socket pair and a datagram socket pair. Prints one line per kind:
"traffic: KIND MSGS messages, BYTES bytes, echoed intact" and exits 1 on any mismatch or
error, or if a kind moved nothing.

--kick sends one UDP datagram over loopback from each CPU in turn: that CPU's NET_RX
softirq then frees the skbs other CPUs deferred to it (TCP's deferred frees), which
otherwise wait there for its next packet.
"""

import multiprocessing as mp
import os
import socket
import sys
import threading

SIZES = [64, 200, 1000, 1500, 4000, 9000, 16384, 65536]


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("peer closed")
        buf += chunk
    return bytes(buf)


def echo_stream(sock):
    """Echoes everything until the peer closes."""
    with sock:
        while True:
            data = sock.recv(65536)
            if not data:
                return
            sock.sendall(data)


def ping_pong(sock, stop, result, kind):
    """Sends numbered messages of every size and checks the echoes."""
    msgs = nbytes = 0
    i = 0
    while not os.path.exists(stop):
        size = SIZES[i % len(SIZES)]
        payload = bytes((i + k) & 0xFF for k in range(256)) * (size // 256) + bytes(size % 256)
        sock.sendall(payload)
        if recv_exact(sock, size) != payload:
            raise ValueError(f"{kind}: message {i} came back changed")
        if msgs == 0:
            # STOP.ready: the traffic flows (a slow guest takes seconds to get here).
            open(f"{stop}.ready", "w").close()
        msgs += 1
        nbytes += size
        i += 1
    result.put((kind, msgs, nbytes, None))


def run_tcp(stop, result):
    try:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        cli = socket.create_connection(srv.getsockname())
        conn, _ = srv.accept()
        t = threading.Thread(target=echo_stream, args=(conn,), daemon=True)
        t.start()
        ping_pong(cli, stop, result, "tcp")
        cli.close()
        t.join(10)
    except Exception as e:  # reported, never swallowed
        result.put(("tcp", 0, 0, repr(e)))


def run_unix(stop, result):
    try:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        t = threading.Thread(target=echo_stream, args=(b,), daemon=True)
        t.start()
        # Datagrams too: one skb per message, freed by the receiver.
        da, db = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        msgs = nbytes = 0
        i = 0
        while not os.path.exists(stop):
            size = SIZES[i % len(SIZES)]
            payload = bytes([i & 0xFF]) * size
            a.sendall(payload)
            if recv_exact(a, size) != payload:
                raise ValueError(f"unix stream: message {i} came back changed")
            da.send(payload[:4000])
            if db.recv(4096) != payload[:4000]:
                raise ValueError(f"unix dgram: message {i} came back changed")
            msgs += 2
            nbytes += size + min(size, 4000)
            i += 1
        a.close()
        t.join(10)
        result.put(("unix", msgs, nbytes, None))
    except Exception as e:
        result.put(("unix", 0, 0, repr(e)))


def kick():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for cpu in sorted(os.sched_getaffinity(0)):
        os.sched_setaffinity(0, {cpu})
        s.sendto(b"x", ("127.0.0.1", 9))
    return 0


def main():
    if sys.argv[1] == "--kick":
        return kick()
    stop = sys.argv[1]
    kinds = sys.argv[2:] or ["tcp", "unix"]
    result = mp.Queue()
    procs = [mp.Process(target={"tcp": run_tcp, "unix": run_unix}[k], args=(stop, result))
             for k in kinds]
    for p in procs:
        p.start()
    rc = 0
    for _ in procs:
        kind, msgs, nbytes, err = result.get()
        if err:
            print(f"traffic: {kind} failed: {err}")
            rc = 1
        elif msgs == 0:
            print(f"traffic: {kind} moved nothing")
            rc = 1
        else:
            print(f"traffic: {kind} {msgs} messages, {nbytes} bytes, echoed intact")
    for p in procs:
        p.join()
    return rc


if __name__ == "__main__":
    sys.exit(main())
