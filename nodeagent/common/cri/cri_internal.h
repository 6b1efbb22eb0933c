/* cri_internal.h -- what cri.c and cri_lifecycle.c share: the client, the one unary call, and the
 * conversions between protobuf-c maps and struct rss_cri_map (not public API). */
#ifndef RSS_CRI_INTERNAL_H
#define RSS_CRI_INTERNAL_H

#include <grpc/grpc.h>
#include <stdlib.h>
#include <string.h>

#include "cri_api.pb-c.h"
#include "rss/cleanup.h"
#include "rss/cri.h"

struct rss_cri {
    char *endpoint;    /* "unix:///path" */
    char *socket_path; /* "/path" */
    grpc_channel *channel;
    int call_timeout_ms;
};

/* Sends `req` to /runtime.v1.RuntimeService/<rpc> and unpacks the answer into *resp (free with
 * protobuf_c_message_free_unpacked). `subject` (an id, or NULL) only goes into messages. */
int cri_call(struct rss_cri *cri, const char *rpc, const char *subject, const ProtobufCMessage *req,
             const ProtobufCMessageDescriptor *resp_desc, int64_t timeout_ms, ProtobufCMessage **resp,
             rss_error_t *err);

#define CALL(cri, rpc, subject, req, resp_desc, timeout_ms, respp, err)                                      \
    cri_call((cri), (rpc), (subject), &(req)->base, &(resp_desc), (timeout_ms),                              \
             (ProtobufCMessage **)(respp), (err))

static inline void free_resp(void *p)
{
    ProtobufCMessage **m = p;
    if (*m)
        protobuf_c_message_free_unpacked(*m, NULL);
}
#define _cleanup_resp_ _cleanup_(free_resp)

/* --- converting maps and strings -------------------------------------------------------------- */

static inline char *dup_str(const char *s)
{
    return rss_xstrdup(s ? s : "");
}

/* Copies a protobuf-c map (entries {base, key, value}) into a struct rss_cri_map. */
#define COPY_MAP(dst, n_src, src)                                                                            \
    do {                                                                                                     \
        (dst)->n = (n_src);                                                                                  \
        (dst)->items = (n_src) ? rss_xcalloc((n_src), sizeof(*(dst)->items)) : NULL;                         \
        for (size_t i_ = 0; i_ < (n_src); i_++) {                                                            \
            (dst)->items[i_].key = dup_str((src)[i_]->key);                                                  \
            (dst)->items[i_].value = dup_str((src)[i_]->value);                                              \
        }                                                                                                    \
    } while (0)

/* Builds a protobuf-c map for a request from a struct rss_cri_map: *n_out entries in *out, which
 * free_map_entries releases. The strings stay the caller's. */
#define BUILD_MAP(Type, INIT, map, n_out, out)                                                               \
    do {                                                                                                     \
        *(n_out) = (map)->n;                                                                                 \
        *(out) = NULL;                                                                                       \
        if ((map)->n) {                                                                                      \
            Type **v_ = rss_xcalloc((map)->n, sizeof(*v_));                                                  \
            Type *e_ = rss_xcalloc((map)->n, sizeof(*e_));                                                   \
            for (size_t i_ = 0; i_ < (map)->n; i_++) {                                                       \
                Type init_ = INIT;                                                                           \
                e_[i_] = init_;                                                                              \
                e_[i_].key = (char *)(map)->items[i_].key;                                                   \
                e_[i_].value = (char *)((map)->items[i_].value ? (map)->items[i_].value : "");               \
                v_[i_] = &e_[i_];                                                                            \
            }                                                                                                \
            *(out) = v_;                                                                                     \
        }                                                                                                    \
    } while (0)

/* Takes the address of the variable BUILD_MAP filled (a cleanup function). */
static inline void free_map_entries(void *pp)
{
    void **v = *(void ***)pp;
    if (v) {
        free(v[0]); /* the entry array BUILD_MAP allocated in one piece */
        free(v);
    }
}

static inline void map_clear(struct rss_cri_map *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free((char *)m->items[i].key);
        free((char *)m->items[i].value);
    }
    free(m->items);
    m->items = NULL;
    m->n = 0;
}

static inline size_t count_argv(const char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

#endif
