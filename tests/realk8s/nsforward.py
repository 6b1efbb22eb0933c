#!/usr/bin/env python3
# nsforward.py -- forwards TCP listeners opened inside the world's network namespace to the API server on the
# host's loopback: the kubelets, and the pods through the service IP, reach the apiserver this way.
#
# Usage: nsforward.py NETNS_PATH TARGET_PORT LISTEN_ADDR:PORT...
# The listening sockets are made inside NETNS_PATH (setns, then back): a socket keeps the namespace it was created
# in, and every connection to the target is made from the host's namespace, where the apiserver listens on
# 127.0.0.1 only. Python 3.11 has no os.setns, hence ctypes.
import ctypes
import os
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def pump(src, dst):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(lsock, port):
    while True:
        c, _ = lsock.accept()
        try:
            u = socket.create_connection(("127.0.0.1", port), timeout=10)
            u.settimeout(None)
        except OSError:
            c.close()
            continue
        for a, b in ((c, u), (u, c)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: nsforward.py NETNS_PATH TARGET_PORT LISTEN_ADDR:PORT...")
    target = int(sys.argv[2])
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    ns = os.open(sys.argv[1], os.O_RDONLY)
    listeners = []
    setns(ns)
    for spec in sys.argv[3:]:
        addr, port = spec.rsplit(":", 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, int(port)))
        s.listen(128)
        listeners.append(s)
    setns(home)
    os.close(ns)
    os.close(home)
    for s in listeners:
        threading.Thread(target=serve, args=(s, target), daemon=True).start()
    print("nsforward: ready", flush=True)
    threading.Event().wait()


main()
