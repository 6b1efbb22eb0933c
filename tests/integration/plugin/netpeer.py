#!/usr/bin/env python3
"""netpeer.py -- the loopback peers of the plugin test (stdlib only), each logging what clients sent it.

Usage:
  netpeer.py proxy PORTFILE LOG
      An HTTP CONNECT proxy. Logs "CONNECT HOST:PORT" for every CONNECT it gets and tunnels it when HOST is
      127.0.0.1 (403 otherwise: the test sends nothing off the machine).
  netpeer.py tls CERT KEY CLIENT_CA PORTFILE LOG MODE
      A TLS server with CERT/KEY that asks for a client certificate signed by CLIENT_CA (optional). Logs
      "sni NAME" (the name the client sent, "-" for none), "client CN" (the client certificate's common
      name, "-" for none) for each connection and "host HOST" for each request. MODE echo answers /version
      as an API server would and every other path with a 404 Status; MODE silent never answers.

Listens on 127.0.0.1, on a free port written to PORTFILE once it listens, until it is killed. LOG is
opened for each line, so a test can empty it between two clients.
"""
import os
import socket
import ssl
import sys
import threading


def log(path, line):
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def listen(portfile):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    with open(portfile + ".tmp", "w", encoding="utf-8") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    return s


def read_head(conn):
    """The bytes up to and including the blank line that ends a request head; b"" when the peer closed."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(4096)
        if not chunk:
            return b"", b""
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def proxy_client(conn, logpath):
    with conn:
        head, rest = read_head(conn)
        if not head:
            return
        method, target = (head.split(b"\r\n", 1)[0].decode("latin-1").split(" ") + ["", ""])[:2]
        log(logpath, "%s %s" % (method, target))
        host, _, port = target.rpartition(":")
        if method != "CONNECT" or host != "127.0.0.1" or not port.isdigit():
            conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        try:
            upstream = socket.create_connection((host, int(port)), timeout=10)
            upstream.settimeout(None)
        except OSError:
            conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        with upstream:
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            t = threading.Thread(target=pipe, args=(upstream, conn), daemon=True)
            t.start()
            pipe(conn, upstream)
            t.join()


def answer(conn, status, body):
    data = body.encode()
    conn.sendall(("HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                  % (status, len(data))).encode() + data)


def tls_client(raw, ctx, logpath, mode):
    try:
        conn = ctx.wrap_socket(raw, server_side=True)
    except (ssl.SSLError, OSError) as e:
        log(logpath, "handshake failed %s" % e.__class__.__name__)
        raw.close()
        return
    with conn:
        cert = conn.getpeercert()
        cn = "-"
        for rdn in (cert or {}).get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    cn = value
        log(logpath, "client %s" % cn)
        try:
            while True:
                head, _ = read_head(conn)
                if not head:
                    return
                lines = head.decode("latin-1").split("\r\n")
                host = "-"
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "host":
                        host = value.strip()
                log(logpath, "host %s" % host)
                if mode == "silent":
                    continue
                path = lines[0].split(" ")[1] if " " in lines[0] else "/"
                if path.split("?")[0] == "/version":
                    answer(conn, "200 OK", '{"major":"1","minor":"32","gitVersion":"v1.32.0"}')
                else:
                    answer(conn, "404 Not Found", '{"kind":"Status","apiVersion":"v1","status":"Failure",'
                           '"message":"netpeer serves no API","reason":"NotFound","code":404}')
        except (ssl.SSLError, OSError):
            return


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "proxy" and len(sys.argv) == 4:
        portfile, logpath = sys.argv[2:4]
        srv = listen(portfile)
        while True:
            conn, _ = srv.accept()
            threading.Thread(target=proxy_client, args=(conn, logpath), daemon=True).start()
    elif mode == "tls" and len(sys.argv) == 8:
        cert, key, client_ca, portfile, logpath, how = sys.argv[2:8]
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        ctx.load_verify_locations(client_ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.sni_callback = lambda _sock, name, _ctx: log(logpath, "sni %s" % (name or "-"))
        srv = listen(portfile)
        while True:
            raw, _ = srv.accept()
            # The handshake in the connection's own thread: a stuck client holds up no other.
            threading.Thread(target=tls_client, args=(raw, ctx, logpath, how), daemon=True).start()
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
