/* certs.c -- kubesim's trust material: a private CA and a 127.0.0.1 server certificate made with
 * OpenSSL's C API (kept in DIR so a restarted kubesim keeps trust), the admin token, kubeconfig. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "rss/cleanup.h"
#include "kubesim.h"

char *ks_read_file(const char *path)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = rss_xmalloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            if (cap > (1 << 20))
                break;
            cap *= 2;
            buf = rss_xrealloc(buf, cap);
        }
    }
    buf[len] = '\0';
    return buf;
}

static int write_file(const char *path, const char *data, mode_t mode, char *errbuf, size_t n)
{
    _cleanup_free_ char *tmp = rss_xasprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        snprintf(errbuf, n, "open %s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t len = strlen(data);
    ssize_t w = write(fd, data, len);
    if (w < 0 || (size_t)w != len || close(fd) < 0) {
        snprintf(errbuf, n, "write %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (rename(tmp, path) < 0) {
        snprintf(errbuf, n, "rename %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static char *pem_of_key(EVP_PKEY *k)
{
    BIO *b = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
    char *data;
    long len = BIO_get_mem_data(b, &data);
    char *s = rss_xmalloc((size_t)len + 1);
    memcpy(s, data, (size_t)len);
    s[len] = '\0';
    BIO_free(b);
    return s;
}

static char *pem_of_cert(X509 *c)
{
    BIO *b = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(b, c);
    char *data;
    long len = BIO_get_mem_data(b, &data);
    char *s = rss_xmalloc((size_t)len + 1);
    memcpy(s, data, (size_t)len);
    s[len] = '\0';
    BIO_free(b);
    return s;
}

static void add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ex) {
        X509_add_ext(cert, ex, -1);
        X509_EXTENSION_free(ex);
    }
}

/* Makes a certificate for `key`, signed by ca_key (self-signed when ca == NULL). */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *ca, EVP_PKEY *ca_key, bool is_ca)
{
    X509 *c = X509_new();
    X509_set_version(c, 2);
    unsigned char serial[16];
    RAND_bytes(serial, sizeof(serial));
    serial[0] &= 0x7f;
    BIGNUM *bn = BN_bin2bn(serial, sizeof(serial), NULL);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(c), -3600);
    X509_gmtime_adj(X509_getm_notAfter(c), 10L * 365 * 24 * 3600);
    X509_set_pubkey(c, key);
    X509_NAME *name = X509_get_subject_name(c);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(c, ca ? X509_get_subject_name(ca) : name);
    X509 *issuer = ca ? ca : c;
    add_ext(c, issuer, NID_subject_key_identifier, "hash");
    if (is_ca) {
        add_ext(c, issuer, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(c, issuer, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
    } else {
        add_ext(c, issuer, NID_authority_key_identifier, "keyid:always");
        add_ext(c, issuer, NID_basic_constraints, "critical,CA:FALSE");
        add_ext(c, issuer, NID_key_usage, "critical,digitalSignature,keyEncipherment");
        add_ext(c, issuer, NID_ext_key_usage, "serverAuth");
        add_ext(c, issuer, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
    }
    X509_sign(c, ca_key ? ca_key : key, EVP_sha256());
    return c;
}

static EVP_PKEY *load_key(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    return k;
}

static X509 *load_cert(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509 *c = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    return c;
}

int ks_certs_ensure(const char *dir, char **cert_pem, char **key_pem, char *errbuf, size_t n)
{
    _cleanup_free_ char *ca_crt_p = rss_xasprintf("%s/ca.crt", dir);
    _cleanup_free_ char *ca_key_p = rss_xasprintf("%s/ca.key", dir);
    _cleanup_free_ char *crt_p = rss_xasprintf("%s/server.crt", dir);
    _cleanup_free_ char *key_p = rss_xasprintf("%s/server.key", dir);
    _cleanup_free_ char *tok_p = rss_xasprintf("%s/token", dir);
    _cleanup_free_ char *ca_pem = ks_read_file(ca_crt_p);
    _cleanup_free_ char *ca_key_pem = ks_read_file(ca_key_p);
    EVP_PKEY *ca_key = ca_key_pem ? load_key(ca_key_pem) : NULL;
    X509 *ca = ca_pem ? load_cert(ca_pem) : NULL;
    int ret = -1;
    bool new_ca = false;
    _cleanup_free_ char *tok = NULL;
    if (!ca || !ca_key) {
        EVP_PKEY_free(ca_key);
        X509_free(ca);
        ca_key = EVP_EC_gen("P-256");
        if (!ca_key) {
            snprintf(errbuf, n, "cannot generate a key");
            return -1;
        }
        ca = make_cert(ca_key, "kubesim-ca", NULL, NULL, true);
        free(ca_pem);
        free(ca_key_pem);
        ca_pem = pem_of_cert(ca);
        ca_key_pem = pem_of_key(ca_key);
        if (write_file(ca_key_p, ca_key_pem, 0600, errbuf, n) < 0 ||
            write_file(ca_crt_p, ca_pem, 0644, errbuf, n) < 0)
            goto out;
        new_ca = true;
    }
    *cert_pem = ks_read_file(crt_p);
    *key_pem = ks_read_file(key_p);
    X509 *have = *cert_pem ? load_cert(*cert_pem) : NULL;
    bool ok = have && *key_pem && !new_ca && X509_verify(have, ca_key) == 1;
    X509_free(have);
    if (!ok) {
        free(*cert_pem);
        free(*key_pem);
        EVP_PKEY *key = EVP_EC_gen("P-256");
        X509 *cert = make_cert(key, "kubesim", ca, ca_key, false);
        *cert_pem = pem_of_cert(cert);
        *key_pem = pem_of_key(key);
        X509_free(cert);
        EVP_PKEY_free(key);
        if (write_file(key_p, *key_pem, 0600, errbuf, n) < 0 ||
            write_file(crt_p, *cert_pem, 0644, errbuf, n) < 0)
            goto out;
    }
    tok = ks_read_file(tok_p);
    if (!tok || !*tok) {
        unsigned char r[16];
        char hex[33];
        RAND_bytes(r, sizeof(r));
        for (size_t i = 0; i < sizeof(r); i++)
            snprintf(hex + 2 * i, 3, "%02x", r[i]);
        if (write_file(tok_p, hex, 0600, errbuf, n) < 0)
            goto out;
    }
    ret = 0;
out:
    EVP_PKEY_free(ca_key);
    X509_free(ca);
    return ret;
}

int ks_write_kubeconfig(const char *dir, int port, char *errbuf, size_t n)
{
    char abs[PATH_MAX];
    if (!realpath(dir, abs)) {
        snprintf(errbuf, n, "realpath %s: %s", dir, strerror(errno));
        return -1;
    }
    _cleanup_free_ char *tok_p = rss_xasprintf("%s/token", abs);
    _cleanup_free_ char *tok = ks_read_file(tok_p);
    if (!tok) {
        snprintf(errbuf, n, "cannot read %s", tok_p);
        return -1;
    }
    tok[strcspn(tok, "\r\n")] = '\0';
    _cleanup_free_ char *cfg = rss_xasprintf("apiVersion: v1\n"
                                             "kind: Config\n"
                                             "clusters:\n"
                                             "- name: kubesim\n"
                                             "  cluster:\n"
                                             "    server: https://127.0.0.1:%d\n"
                                             "    certificate-authority: %s/ca.crt\n"
                                             "users:\n"
                                             "- name: kubesim-admin\n"
                                             "  user:\n"
                                             "    token: %s\n"
                                             "contexts:\n"
                                             "- name: kubesim\n"
                                             "  context:\n"
                                             "    cluster: kubesim\n"
                                             "    user: kubesim-admin\n"
                                             "    namespace: default\n"
                                             "current-context: kubesim\n",
                                             port, abs, tok);
    _cleanup_free_ char *cfg_p = rss_xasprintf("%s/kubeconfig", abs);
    _cleanup_free_ char *port_p = rss_xasprintf("%s/port", abs);
    char portbuf[16];
    snprintf(portbuf, sizeof(portbuf), "%d\n", port);
    if (write_file(cfg_p, cfg, 0600, errbuf, n) < 0 || write_file(port_p, portbuf, 0644, errbuf, n) < 0)
        return -1;
    return 0;
}
