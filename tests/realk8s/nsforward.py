#!/usr/bin/env python3
# nsforward.py -- joins the host's network namespace and the world's, both ways, for the apiserver.
#
# Usage: nsforward.py NETNS_PATH TARGET_PORT LISTEN_ADDR:PORT...
#        nsforward.py --connect NETNS_PATH UNIX_SOCKET
# The first form: TCP listeners made inside NETNS_PATH forward to the API server on the host's loopback (it
# listens on 127.0.0.1 only): the kubelets, and the pods through the service IP, reach the apiserver this way.
# The second: an HTTP CONNECT proxy on a unix socket, the apiserver's egress for the "cluster"
# (--egress-selector-config-file): every connection the apiserver makes to a kubelet (pods/log, exec,
# port-forward, node proxy) is made inside NETNS_PATH, where the nodes' addresses are; the host has no route
# to them. Only that namespace is reachable through it, and it has no route out.
# A socket keeps the namespace it was created in, so sockets are made inside NETNS_PATH (setns, then back).
# Python 3.11 has no os.setns, hence ctypes.
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


def socket_in(ns, home, family):
    # setns moves the calling thread only: the other tunnels' threads stay where they are.
    setns(ns)
    try:
        return socket.socket(family, socket.SOCK_STREAM)
    finally:
        setns(home)


def tunnel(c, ns, home):
    # One CONNECT per connection, as the apiserver's egress dialer sends it (a request line, a Host header);
    # anything else is answered 400 and closed.
    try:
        c.settimeout(10)
        req = b""
        while b"\r\n\r\n" not in req:
            b = c.recv(4096)
            if not b or len(req) > 16384:
                raise OSError("no CONNECT request")
            req += b
        head, rest = req.split(b"\r\n\r\n", 1)
        parts = head.split(b"\r\n", 1)[0].split()
        if len(parts) != 3 or parts[0] != b"CONNECT" or rest:
            c.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            raise OSError("not a CONNECT request: %r" % head[:80])
        host, port = parts[1].decode().rsplit(":", 1)
        u = socket_in(ns, home, socket.AF_INET6 if ":" in host else socket.AF_INET)
        u.settimeout(10)
        try:
            u.connect((host.strip("[]"), int(port)))
        except OSError as e:
            u.close()
            c.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
            raise OSError("connect %s:%s: %s" % (host, port, e))
        u.settimeout(None)
        c.settimeout(None)
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    except (OSError, ValueError) as e:
        print("nsforward: %s" % e, flush=True)
        c.close()
        return
    for a, b in ((c, u), (u, c)):
        threading.Thread(target=pump, args=(a, b), daemon=True).start()


def connect_proxy(netns, path):
    ns = os.open(netns, os.O_RDONLY)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o600)
    s.listen(128)
    print("nsforward: CONNECT proxy ready on %s" % path, flush=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=tunnel, args=(c, ns, home), daemon=True).start()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--connect":
        connect_proxy(sys.argv[2], sys.argv[3])
    if len(sys.argv) < 4:
        sys.exit("usage: nsforward.py NETNS_PATH TARGET_PORT LISTEN_ADDR:PORT...\n"
                 "       nsforward.py --connect NETNS_PATH UNIX_SOCKET")
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
