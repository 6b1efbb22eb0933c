/* kube_mux.c -- the Kubernetes client's one connection: every request and watch of a client is a transfer
 * on one curl multi handle, driven by one thread, and multiplexed over one HTTP/2 connection when the
 * server speaks it (as client-go does).
 *
 * Why: with one HTTP/1.1 connection per watch and per concurrent request, each rssd held about 14
 * connections, and a request that timed out took its connection down with it. 200 agents retrying
 * against a slow API server became a storm of TLS handshakes that filled its listen queue (docs/scale.md,
 * 2 December). On HTTP/2 a timed-out request resets only its own stream.
 *
 * The price of one connection is that a connection which died silently (a dropped route, a NAT entry
 * gone, a vanished host) would take every transfer with it until TCP gives up, up to 15 minutes later:
 * client-go's known failure before its HTTP/2 health check. The kernel tells dead from slow here: every
 * socket gets TCP_USER_TIMEOUT, so a connection whose sent bytes (a request, or a keepalive probe when it
 * is idle) stay unacknowledged for USER_TIMEOUT_MS is closed, its transfers fail (requests retry, watches
 * resume) and the next ones connect anew. A server that is only slow or stalled still acknowledges at the
 * TCP level and keeps its connection: giving it up on silence alone made 200 agents reconnect all their
 * watches at once when a loaded API server paused for 10 s, and it did not recover (docs/scale.md).
 *
 * Threads: callers block in kube_mux_perform or read a stream with kube_mux_next; only the mux thread
 * touches the multi handle and runs curl's callbacks. */
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/log.h"
#include "kube_internal.h"

/* How long sent bytes may stay unacknowledged by the peer's TCP before the kernel closes the connection:
 * well above any ACK delay of a live peer, however loaded; a dead path is given up after this. */
#define USER_TIMEOUT_MS 20000u
/* An idle connection is probed after this many seconds, then every KEEPINTVL_S: a dead idle connection
 * fails within KEEPIDLE_S + USER_TIMEOUT_MS too, not at its next request. */
#define KEEPIDLE_S  10L
#define KEEPINTVL_S 5L

/* How long a stream's consumer may fall behind before its watch is ended (and resumed by the caller). */
#define STREAM_BUFFER_MAX (64u << 20)

bool kube_buf_append(char **data, size_t *len, size_t *cap, size_t max, const char *p, size_t n)
{
    if (*len + n > max)
        return false;
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n + 1)
            c *= 2;
        *data = rss_xrealloc(*data, c);
        *cap = c;
    }
    memcpy(*data + *len, p, n);
    *len += n;
    (*data)[*len] = '\0';
    return true;
}

static CURLM *multi_new(void)
{
    CURLM *multi = curl_multi_init();
    if (multi) {
        curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
        /* A watch holds its stream for minutes; the server's own limit (kube-apiserver: 250-1000
         * streams) is far above what one rssd opens. */
        curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 250L);
    }
    return multi;
}

static void wake(struct kube_mux *m)
{
    uint64_t one = 1;
    /* A full counter already means "wake up". */
    ssize_t n = write(m->efd, &one, sizeof(one));
    (void)n;
}

/* --- callbacks, on the mux thread --- */

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct kube_xfer *x = ud;
    size_t n = size * nmemb;
    if (!x->stream)
        return x->write_fn(ptr, size, nmemb, x->write_ud);
    long http = 0;
    curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &http);
    pthread_mutex_lock(&x->mux->lock);
    bool ok = kube_buf_append(&x->sbuf, &x->slen, &x->scap, STREAM_BUFFER_MAX, ptr, n);
    x->http = http;
    if (!ok)
        x->overflow = true;
    pthread_cond_broadcast(&x->cond);
    pthread_mutex_unlock(&x->mux->lock);
    return ok ? n : 0;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
    struct kube_xfer *x = ud;
    if (x->header_fn)
        return x->header_fn(buf, size, nitems, x->header_ud);
    return size * nitems;
}

/* --- the mux thread --- */

/* Takes x out of the multi (the mux thread's side of finishing). */
static void detach(struct kube_mux *m, struct kube_xfer *x)
{
    curl_multi_remove_handle(m->multi, x->h);
    for (struct kube_xfer **p = &m->active; *p; p = &(*p)->next)
        if (*p == x) {
            *p = x->next;
            break;
        }
}

/* Hands x back to its owner, who may free it as soon as the lock is gone. */
static void release(struct kube_mux *m, struct kube_xfer *x, CURLcode result)
{
    pthread_mutex_lock(&m->lock);
    x->result = result;
    x->done = true;
    pthread_cond_broadcast(&x->cond);
    pthread_mutex_unlock(&m->lock);
}

static void finish(struct kube_mux *m, struct kube_xfer *x, CURLcode result)
{
    detach(m, x);
    release(m, x, result);
}

static int on_socket(void *ud, curl_socket_t fd, curlsocktype purpose)
{
    (void)ud;
    if (purpose == CURLSOCKTYPE_IPCXN) {
        unsigned int ms = USER_TIMEOUT_MS;
        /* Best effort: without it a dead path costs minutes, not correctness. */
        if (setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms)) < 0)
            rss_log_debug("kube: TCP_USER_TIMEOUT: %s", strerror(errno));
    }
    return CURL_SOCKOPT_OK;
}

static void *mux_main(void *arg)
{
    struct kube_mux *m = arg;
    for (;;) {
        pthread_mutex_lock(&m->lock);
        struct kube_xfer *add = m->pending;
        m->pending = NULL;
        bool quit = m->quit;
        /* Cancelled transfers are collected first, finished below without the lock held (curl may call
         * back into code that takes it). */
        struct kube_xfer **cancelled = NULL;
        size_t nc = 0, cap = 0;
        for (struct kube_xfer *x = m->active; x; x = x->next)
            if (x->cancel)
                *(struct kube_xfer **)rss_xarray_push(&cancelled, &nc, &cap, sizeof(*cancelled)) = x;
        pthread_mutex_unlock(&m->lock);

        while (add) {
            struct kube_xfer *x = add;
            add = x->next;
            x->next = m->active;
            m->active = x;
            CURLMcode mc = curl_multi_add_handle(m->multi, x->h);
            if (mc != CURLM_OK) {
                rss_log_warn("kube: curl_multi_add_handle: %s", curl_multi_strerror(mc));
                m->active = x->next;
                release(m, x, CURLE_OUT_OF_MEMORY);
            }
        }
        for (size_t i = 0; i < nc; i++)
            finish(m, cancelled[i], CURLE_ABORTED_BY_CALLBACK);
        free(cancelled);
        if (quit && !m->active)
            break;

        /* A request never outlives its own timeout, whatever state curl holds it in: one that waits for
         * a connection still being made (PIPEWAIT) was seen to wait out that connection's 9 s connect
         * timeout past its own 2.5 s, which delayed the failsafe's last look and so a self-fence. */
        int64_t now = rss_clock_mono_ns();
        long wait_ms = 1000;
        for (struct kube_xfer *x = m->active, *nx; x; x = nx) {
            nx = x->next;
            if (!x->deadline_ns)
                continue;
            if (now >= x->deadline_ns) {
                finish(m, x, CURLE_OPERATION_TIMEDOUT);
                continue;
            }
            long left = (long)((x->deadline_ns - now) / 1000000) + 1;
            if (left < wait_ms)
                wait_ms = left;
        }

        int running = 0;
        curl_multi_perform(m->multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m->multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct kube_xfer *x = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            finish(m, x, msg->data.result);
        }

        struct curl_waitfd extra = {.fd = m->efd, .events = POLLIN};
        int ready = 0;
        curl_multi_poll(m->multi, &extra, 1, (int)wait_ms, &ready);
        if (extra.revents & POLLIN) {
            uint64_t v;
            ssize_t r = read(m->efd, &v, sizeof(v));
            (void)r;
        }
    }
    return NULL;
}

/* --- the owners' side --- */

int kube_mux_init(struct kube_mux *m)
{
    memset(m, 0, sizeof(*m));
    pthread_mutex_init(&m->lock, NULL);
    m->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return m->efd < 0 ? -1 : 0;
}

void kube_mux_free(struct kube_mux *m)
{
    pthread_mutex_lock(&m->lock);
    m->quit = true;
    bool started = m->started;
    pthread_mutex_unlock(&m->lock);
    if (started) {
        wake(m);
        pthread_join(m->thread, NULL);
        curl_multi_cleanup(m->multi);
    }
    if (m->efd >= 0)
        close(m->efd);
    pthread_mutex_destroy(&m->lock);
}

static int submit(struct kube_mux *m, struct kube_xfer *x)
{
    x->mux = m;
    x->done = x->cancel = x->overflow = false;
    x->next = NULL;
    /* On CLOCK_MONOTONIC: a wall clock set back must not stretch kube_mux_next's wait. */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&x->cond, &ca);
    pthread_condattr_destroy(&ca);
    curl_easy_setopt(x->h, CURLOPT_PRIVATE, (char *)x);
    curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(x->h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(x->h, CURLOPT_HEADERDATA, x);
    /* Wait for the connection being made rather than open a second one beside it, so that requests
     * issued together share one HTTP/2 connection. */
    curl_easy_setopt(x->h, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(x->h, CURLOPT_SOCKOPTFUNCTION, on_socket);
    curl_easy_setopt(x->h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(x->h, CURLOPT_TCP_KEEPIDLE, KEEPIDLE_S);
    curl_easy_setopt(x->h, CURLOPT_TCP_KEEPINTVL, KEEPINTVL_S);

    pthread_mutex_lock(&m->lock);
    if (!m->started) {
        m->multi = multi_new();
        if (!m->multi || m->efd < 0 || pthread_create(&m->thread, NULL, mux_main, m) != 0) {
            if (m->multi)
                curl_multi_cleanup(m->multi);
            m->multi = NULL;
            pthread_mutex_unlock(&m->lock);
            pthread_cond_destroy(&x->cond);
            return -1;
        }
        m->started = true;
    }
    x->next = m->pending;
    m->pending = x;
    pthread_mutex_unlock(&m->lock);
    wake(m);
    return 0;
}

CURLcode kube_mux_perform(struct kube_mux *m, struct kube_xfer *x)
{
    x->stream = false;
    if (submit(m, x) < 0)
        return CURLE_OUT_OF_MEMORY;
    pthread_mutex_lock(&m->lock);
    while (!x->done)
        pthread_cond_wait(&x->cond, &m->lock);
    pthread_mutex_unlock(&m->lock);
    pthread_cond_destroy(&x->cond);
    return x->result;
}

int kube_mux_start(struct kube_mux *m, struct kube_xfer *x)
{
    x->stream = true;
    x->sbuf = NULL;
    x->slen = x->scap = 0;
    x->http = 0;
    return submit(m, x);
}

int kube_mux_next(struct kube_mux *m, struct kube_xfer *x, long wait_ms, char **data, size_t *len, long *http)
{
    struct timespec until = rss_clock_mono_after(wait_ms);
    pthread_mutex_lock(&m->lock);
    while (!x->slen && !x->done)
        if (pthread_cond_timedwait(&x->cond, &m->lock, &until) == ETIMEDOUT)
            break;
    int r = -1;
    if (x->slen) {
        /* Hand the whole buffer over; the mux starts a new one. */
        *data = x->sbuf;
        *len = x->slen;
        *http = x->http;
        x->sbuf = NULL;
        x->slen = x->scap = 0;
        r = 1;
    } else if (x->done) {
        r = 0;
    }
    pthread_mutex_unlock(&m->lock);
    return r;
}

void kube_mux_end(struct kube_mux *m, struct kube_xfer *x)
{
    pthread_mutex_lock(&m->lock);
    if (!x->done) {
        x->cancel = true;
        pthread_mutex_unlock(&m->lock);
        wake(m);
        pthread_mutex_lock(&m->lock);
        while (!x->done)
            pthread_cond_wait(&x->cond, &m->lock);
    }
    free(x->sbuf);
    x->sbuf = NULL;
    x->slen = x->scap = 0;
    pthread_mutex_unlock(&m->lock);
    pthread_cond_destroy(&x->cond);
}
