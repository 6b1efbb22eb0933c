/* probe.c -- the kubelet's httpGet probe: one plain HTTP GET with a deadline, answering the status code.
 *
 * As the kubelet's prober: a fresh connection per probe, "Connection: close", User-Agent kube-probe;
 * only the status line matters (200-399 is success, judged by the caller).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kubelet.h"
#include "rss/cleanup.h"

static long left_ms(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
    return ms > 0 ? ms : 0;
}

/* Waits for events on fd until the deadline: 0 when ready, -1 on timeout. */
static int wait_fd(int fd, short events, const struct timespec *deadline)
{
    struct pollfd p = {.fd = fd, .events = events};
    for (;;) {
        int r = poll(&p, 1, (int)left_ms(deadline));
        if (r > 0)
            return 0;
        if (r == 0 || errno != EINTR)
            return -1;
    }
}

int kl_probe_http(const char *host, int port, const char *path, long timeout_ms, rss_error_t *err)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (port <= 0 || port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return rss_error_make(err, RSS_E_INVALID, 0, "probe: bad address %s:%d (IPv4 only)", host, port);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return rss_error_errno(err, errno, "probe: socket");
    /* From the pod's own address (the node's: pods are on the host network), as a node's kubelet probes
     * from the node: a partition of the node (world partition) leaves the node talking to itself. Not
     * a local address: the kernel picks the source, as before. */
    struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr = sa.sin_addr};
    (void)bind(fd, (struct sockaddr *)&src, sizeof(src));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (errno != EINPROGRESS)
            return rss_error_errno(err, errno, "probe: connect %s:%d", host, port);
        int e = 0;
        socklen_t el = sizeof(e);
        if (wait_fd(fd, POLLOUT, &deadline) < 0)
            return rss_error_make(err, RSS_E_TIMEOUT, 0, "probe: connect %s:%d timed out", host, port);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e)
            return rss_error_errno(err, e ? e : errno, "probe: connect %s:%d", host, port);
    }
    _cleanup_free_ char *req =
        rss_xasprintf("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: kube-probe/1.30\r\n"
                      "Accept: */*\r\nConnection: close\r\n\r\n",
                      path && *path ? path : "/", host, port);
    size_t off = 0, len = strlen(req);
    while (off < len) {
        if (wait_fd(fd, POLLOUT, &deadline) < 0)
            return rss_error_make(err, RSS_E_TIMEOUT, 0, "probe: sending to %s:%d timed out", host, port);
        ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return rss_error_errno(err, errno, "probe: send %s:%d", host, port);
        if (n > 0)
            off += (size_t)n;
    }
    char buf[256];
    size_t got = 0;
    while (got < sizeof(buf) - 1 && !memchr(buf, '\n', got)) {
        if (wait_fd(fd, POLLIN, &deadline) < 0)
            return rss_error_make(err, RSS_E_TIMEOUT, 0, "probe: no answer from %s:%d in %ld ms", host, port,
                                  timeout_ms);
        ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
        if (n == 0)
            break;
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return rss_error_errno(err, errno, "probe: recv %s:%d", host, port);
        if (n > 0)
            got += (size_t)n;
    }
    buf[got] = '\0';
    int code = 0;
    if (sscanf(buf, "HTTP/%*d.%*d %d", &code) != 1 || code < 100 || code > 999)
        return rss_error_make(err, RSS_E_INVALID, 0, "probe: %s:%d answered no HTTP status line", host, port);
    return code;
}
