/* auth.c -- kubesim's authentication: who a bearer token is (the admin, users of the tokens file,
 * ServiceAccounts), and the TokenRequest subresource that issues ServiceAccount tokens. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "kubesim.h"

#define SA_PREFIX "kubesim-sa:"

static const char *state_dir;
static unsigned char sa_key[32];

/* The tokens files, cached by mtime. */
static pthread_mutex_t tok_mu = PTHREAD_MUTEX_INITIALIZER;
static char *tokens_cache, *token_cache;
static struct timespec tokens_mtime, token_mtime;

int ks_auth_init(const char *dir, char *errbuf, size_t n)
{
    state_dir = dir;
    _cleanup_free_ char *path = rss_xasprintf("%s/sa.key", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = read(fd, sa_key, sizeof(sa_key));
        close(fd);
        if (r == (ssize_t)sizeof(sa_key))
            return 0;
    }
    if (RAND_bytes(sa_key, sizeof(sa_key)) != 1) {
        snprintf(errbuf, n, "cannot make a ServiceAccount signing key");
        return -1;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, sa_key, sizeof(sa_key)) != (ssize_t)sizeof(sa_key)) {
        snprintf(errbuf, n, "write %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* ---- users ---- */

struct ks_user *ks_user_new(const char *name, const char *uid, const char *const *groups, size_t n)
{
    struct ks_user *u = rss_xcalloc(1, sizeof(*u));
    u->name = rss_xstrdup(name);
    u->uid = rss_xstrdup(uid ? uid : "");
    u->groups = rss_xcalloc(n + 1, sizeof(char *));
    bool anon = !strcmp(name, "system:anonymous");
    for (size_t i = 0; i < n; i++) {
        if (strcmp(groups[i], "system:authenticated") && strcmp(groups[i], "system:unauthenticated"))
            u->groups[u->n_groups++] = rss_xstrdup(groups[i]);
    }
    u->groups[u->n_groups++] = rss_xstrdup(anon ? "system:unauthenticated" : "system:authenticated");
    return u;
}

void ks_user_free(struct ks_user *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n_groups; i++)
        free(u->groups[i]);
    free(u->groups);
    free(u->name);
    free(u->uid);
    free(u);
}

bool ks_user_in_group(const struct ks_user *u, const char *group)
{
    for (size_t i = 0; u && i < u->n_groups; i++) {
        if (!strcmp(u->groups[i], group))
            return true;
    }
    return false;
}

struct ks_user *ks_user_anonymous(void)
{
    return ks_user_new("system:anonymous", "", NULL, 0);
}

static struct ks_user *admin_user(void)
{
    static const char *const groups[] = {"system:masters"};
    return ks_user_new("kubesim-admin", "", groups, 1);
}

/* ---- the tokens files ---- */

static bool same_time(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static void refresh(const char *path, char **cache, struct timespec *mtime)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        free(*cache);
        *cache = NULL;
        memset(mtime, 0, sizeof(*mtime));
        return;
    }
    if (*cache && same_time(&st.st_mtim, mtime))
        return;
    free(*cache);
    *cache = ks_read_file(path);
    *mtime = st.st_mtim;
}

/* One CSV field of a token-file line (quotes allowed, "" inside quotes is a quote); advances *p. */
static char *csv_field(const char **p, const char *end)
{
    const char *s = *p;
    size_t cap = (size_t)(end - s) + 1, len = 0;
    char *out = rss_xmalloc(cap);
    if (s < end && *s == '"') {
        s++;
        while (s < end) {
            if (*s == '"' && s + 1 < end && s[1] == '"') {
                out[len++] = '"';
                s += 2;
            } else if (*s == '"') {
                s++;
                break;
            } else {
                out[len++] = *s++;
            }
        }
    }
    while (s < end && *s != ',')
        out[len++] = *s++;
    out[len] = '\0';
    *p = s < end ? s + 1 : end;
    return out;
}

/* A user from a line "token,user,uid[,"g1,g2"]" or a bare admin token; NULL if it is not `token`. */
static struct ks_user *user_of_line(const char *line, size_t len, const char *token)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    const char *end = line + len, *comma = memchr(line, ',', len);
    size_t tl = strlen(token);
    if (!comma)
        return len == tl && !memcmp(line, token, tl) ? admin_user() : NULL;
    if ((size_t)(comma - line) != tl || memcmp(line, token, tl))
        return NULL;
    const char *p = comma + 1;
    _cleanup_free_ char *name = csv_field(&p, end);
    _cleanup_free_ char *uid = p < end ? csv_field(&p, end) : rss_xstrdup("");
    _cleanup_free_ char *groups = p < end ? csv_field(&p, end) : rss_xstrdup("");
    const char *gv[64];
    size_t ng = 0;
    char *save = NULL;
    for (char *g = strtok_r(groups, ",", &save); g && ng < 64; g = strtok_r(NULL, ",", &save))
        gv[ng++] = g;
    return *name ? ks_user_new(name, uid, gv, ng) : NULL;
}

static struct ks_user *user_in_file(const char *text, const char *token)
{
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        struct ks_user *u = user_of_line(p, len, token);
        if (u)
            return u;
        p = e ? e + 1 : NULL;
    }
    return NULL;
}

/* ---- ServiceAccount tokens: "kubesim-sa:NS:NAME:UID:HMAC-SHA256(key, NS:NAME:UID) in hex" ---- */

static void sa_mac(const char *payload, char hex[65])
{
    unsigned char mac[32];
    unsigned int len = sizeof(mac);
    HMAC(EVP_sha256(), sa_key, sizeof(sa_key), (const unsigned char *)payload, strlen(payload), mac, &len);
    for (unsigned i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", mac[i]);
}

static struct ks_user *sa_user(const char *token)
{
    const char *payload = token + strlen(SA_PREFIX);
    const char *mac = strrchr(payload, ':');
    if (!mac || strlen(mac + 1) != 64)
        return NULL;
    _cleanup_free_ char *body = strndup(payload, (size_t)(mac - payload));
    char want[65];
    sa_mac(body, want);
    if (CRYPTO_memcmp(want, mac + 1, 64))
        return NULL;
    char *ns = body, *name = strchr(ns, ':'), *uid = name ? strchr(name + 1, ':') : NULL;
    if (!uid)
        return NULL;
    *name++ = '\0';
    *uid++ = '\0';
    /* As the real authenticator: the ServiceAccount must still exist, with the same uid. */
    ks_lock();
    struct ks_snap *s = ks_store_get("", "serviceaccounts", ns, name);
    const char *have = s ? ks_json_str(s->obj, "metadata.uid") : NULL;
    bool ok = have && !strcmp(have, uid) && !ks_json_path(s->obj, "metadata.deletionTimestamp");
    ks_unlock();
    if (!ok)
        return NULL;
    _cleanup_free_ char *user = rss_xasprintf("system:serviceaccount:%s:%s", ns, name);
    _cleanup_free_ char *nsgroup = rss_xasprintf("system:serviceaccounts:%s", ns);
    const char *groups[] = {"system:serviceaccounts", nsgroup};
    return ks_user_new(user, uid, groups, 2);
}

struct ks_user *ks_authenticate(const char *token)
{
    if (!token || !*token || !state_dir)
        return NULL;
    if (!strncmp(token, SA_PREFIX, strlen(SA_PREFIX)))
        return sa_user(token);
    _cleanup_free_ char *tok_p = rss_xasprintf("%s/token", state_dir);
    _cleanup_free_ char *toks_p = rss_xasprintf("%s/tokens", state_dir);
    pthread_mutex_lock(&tok_mu);
    refresh(tok_p, &token_cache, &token_mtime);
    refresh(toks_p, &tokens_cache, &tokens_mtime);
    struct ks_user *u = NULL;
    if (token_cache) {
        size_t tl = strcspn(token_cache, "\r\n");
        if (tl == strlen(token) && !memcmp(token_cache, token, tl))
            u = admin_user();
    }
    if (!u && tokens_cache)
        u = user_in_file(tokens_cache, token);
    pthread_mutex_unlock(&tok_mu);
    return u;
}

void ks_auth_free(void)
{
    free(tokens_cache);
    free(token_cache);
    tokens_cache = token_cache = NULL;
}

/* ---- TokenRequest ---- */

void ks_token_request(const struct ks_req *req, const char *ns, const char *name, struct ks_reply *reply)
{
    _cleanup_json_ cJSON *in = ks_body_json(req);
    if (req->body && req->body_len && !cJSON_IsObject(in)) {
        ks_reply_status(reply, 400, "BadRequest", "the body of the request was in an unknown format");
        return;
    }
    ks_lock();
    struct ks_snap *s = ks_store_get("", "serviceaccounts", ns, name);
    _cleanup_free_ char *uid = s ? rss_xstrdup(ks_json_str(s->obj, "metadata.uid")) : NULL;
    ks_unlock();
    if (!uid) {
        cJSON *st = ks_status_new(404, "NotFound", NULL);
        _cleanup_free_ char *msg = rss_xasprintf("serviceaccounts \"%s\" not found", name);
        cJSON_AddStringToObject(st, "message", msg);
        cJSON *d = cJSON_AddObjectToObject(st, "details");
        cJSON_AddStringToObject(d, "name", name);
        cJSON_AddStringToObject(d, "kind", "serviceaccounts");
        ks_reply_json(reply, 404, st);
        return;
    }
    _cleanup_free_ char *payload = rss_xasprintf("%s:%s:%s", ns, name, uid);
    char mac[65];
    sa_mac(payload, mac);
    _cleanup_free_ char *token = rss_xasprintf(SA_PREFIX "%s:%s", payload, mac);
    double exp = 3600;
    const cJSON *e = in ? ks_json_path(in, "spec.expirationSeconds") : NULL;
    if (cJSON_IsNumber(e) && e->valuedouble >= 600)
        exp = e->valuedouble;
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kind", "TokenRequest");
    cJSON_AddStringToObject(out, "apiVersion", "authentication.k8s.io/v1");
    cJSON *md = cJSON_AddObjectToObject(out, "metadata");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", ns);
    _cleanup_free_ char *now = ks_time_now(0);
    cJSON_AddStringToObject(md, "creationTimestamp", now);
    cJSON *spec = in && cJSON_IsObject(ks_json_path(in, "spec"))
                      ? cJSON_Duplicate(ks_json_path(in, "spec"), true)
                      : cJSON_CreateObject();
    if (!cJSON_GetObjectItemCaseSensitive(spec, "audiences")) {
        cJSON *aud = cJSON_AddArrayToObject(spec, "audiences");
        cJSON_AddItemToArray(aud, cJSON_CreateString("https://kubernetes.default.svc"));
    }
    ks_json_set_num(spec, "expirationSeconds", exp);
    cJSON_AddItemToObject(out, "spec", spec);
    cJSON *st = cJSON_AddObjectToObject(out, "status");
    cJSON_AddStringToObject(st, "token", token);
    _cleanup_free_ char *until = ks_time_now((long)exp);
    cJSON_AddStringToObject(st, "expirationTimestamp", until);
    ks_reply_json(reply, 201, out);
}

void ks_default_serviceaccount(const char *ns)
{
    if (ks_store_get("", "serviceaccounts", ns, "default"))
        return;
    cJSON *sa = cJSON_CreateObject();
    cJSON_AddStringToObject(sa, "apiVersion", "v1");
    cJSON_AddStringToObject(sa, "kind", "ServiceAccount");
    cJSON *md = cJSON_AddObjectToObject(sa, "metadata");
    _cleanup_free_ char *uid = ks_uuid();
    _cleanup_free_ char *now = ks_time_now(0);
    cJSON_AddStringToObject(md, "name", "default");
    cJSON_AddStringToObject(md, "namespace", ns);
    cJSON_AddStringToObject(md, "uid", uid);
    cJSON_AddStringToObject(md, "creationTimestamp", now);
    ks_store_put("", "serviceaccounts", ns, sa, "POST");
}
