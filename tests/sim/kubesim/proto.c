/* proto.c -- decodes the few protobuf request bodies kubesim accepts (kubectl's typed clients send
 * them: access reviews for `auth can-i`, TokenRequest for `create token`; Helm's release storage
 * sends Secrets, and DeleteOptions with its deletes; `kubectl drain` Evictions) into their JSON form. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "kubesim.h"

enum ftype {
    F_STRING,
    F_STRINGS,
    F_INT,
    F_BOOL,
    F_MSG,
    F_STRING_MAP, /* map<string, string>: repeated {1 key, 2 value} */
    F_BYTES_MAP,  /* map<string, bytes>: the values base64 in JSON, as Secret.data */
};

struct field {
    unsigned num;
    const char *json;
    enum ftype type;
    const struct field *msg; /* F_MSG: its fields, ended by num 0 */
};

/* k8s.io/api generated.proto field numbers, for what kubesim reads (others are skipped). */
static const struct field resource_attrs[] = {
    {1, "namespace", F_STRING, NULL}, {2, "verb", F_STRING, NULL},     {3, "group", F_STRING, NULL},
    {4, "version", F_STRING, NULL},   {5, "resource", F_STRING, NULL}, {6, "subresource", F_STRING, NULL},
    {7, "name", F_STRING, NULL},      {0, NULL, F_STRING, NULL}};
static const struct field nonresource_attrs[] = {
    {1, "path", F_STRING, NULL}, {2, "verb", F_STRING, NULL}, {0, NULL, F_STRING, NULL}};
static const struct field access_spec[] = {{1, "resourceAttributes", F_MSG, resource_attrs},
                                           {2, "nonResourceAttributes", F_MSG, nonresource_attrs},
                                           {3, "user", F_STRING, NULL},
                                           {4, "groups", F_STRINGS, NULL},
                                           {6, "uid", F_STRING, NULL},
                                           {0, NULL, F_STRING, NULL}};
static const struct field rules_spec[] = {{1, "namespace", F_STRING, NULL}, {0, NULL, F_STRING, NULL}};
static const struct field bound_ref[] = {{1, "kind", F_STRING, NULL},
                                         {2, "apiVersion", F_STRING, NULL},
                                         {3, "name", F_STRING, NULL},
                                         {4, "uid", F_STRING, NULL},
                                         {0, NULL, F_STRING, NULL}};
static const struct field token_spec[] = {{1, "audiences", F_STRINGS, NULL},
                                          {3, "boundObjectRef", F_MSG, bound_ref},
                                          {4, "expirationSeconds", F_INT, NULL},
                                          {0, NULL, F_STRING, NULL}};
static const struct field access_review[] = {{2, "spec", F_MSG, access_spec}, {0, NULL, F_STRING, NULL}};
static const struct field rules_review[] = {{2, "spec", F_MSG, rules_spec}, {0, NULL, F_STRING, NULL}};
static const struct field token_request[] = {{2, "spec", F_MSG, token_spec}, {0, NULL, F_STRING, NULL}};
/* ObjectMeta: what a client sets on a create or update (the server fills in the rest). */
static const struct field object_meta[] = {{1, "name", F_STRING, NULL},
                                           {2, "generateName", F_STRING, NULL},
                                           {3, "namespace", F_STRING, NULL},
                                           {5, "uid", F_STRING, NULL},
                                           {6, "resourceVersion", F_STRING, NULL},
                                           {11, "labels", F_STRING_MAP, NULL},
                                           {12, "annotations", F_STRING_MAP, NULL},
                                           {14, "finalizers", F_STRINGS, NULL},
                                           {0, NULL, F_STRING, NULL}};
static const struct field secret[] = {
    {1, "metadata", F_MSG, object_meta},   {2, "data", F_BYTES_MAP, NULL}, {3, "type", F_STRING, NULL},
    {4, "stringData", F_STRING_MAP, NULL}, {5, "immutable", F_BOOL, NULL}, {0, NULL, F_STRING, NULL}};
static const struct field preconditions[] = {
    {1, "uid", F_STRING, NULL}, {2, "resourceVersion", F_STRING, NULL}, {0, NULL, F_STRING, NULL}};
static const struct field delete_options[] = {
    {1, "gracePeriodSeconds", F_INT, NULL}, {2, "preconditions", F_MSG, preconditions},
    {3, "orphanDependents", F_BOOL, NULL},  {4, "propagationPolicy", F_STRING, NULL},
    {5, "dryRun", F_STRINGS, NULL},         {0, NULL, F_STRING, NULL}};
/* policy/v1 Eviction: what `kubectl drain` sends through its typed client. */
static const struct field eviction[] = {{1, "metadata", F_MSG, object_meta},
                                        {2, "deleteOptions", F_MSG, delete_options},
                                        {0, NULL, F_STRING, NULL}};
static const struct field type_meta[] = {
    {1, "apiVersion", F_STRING, NULL}, {2, "kind", F_STRING, NULL}, {0, NULL, F_STRING, NULL}};

static bool varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* One map entry {1 key, 2 value} into obj; bytes values become base64 (JSON's form of []byte). */
static bool map_entry(const unsigned char *p, const unsigned char *end, bool bytes, cJSON *obj)
{
    const unsigned char *k = NULL, *val = (const unsigned char *)"";
    uint64_t klen = 0, vlen = 0;
    while (p < end) {
        uint64_t key, n;
        if (!varint(&p, end, &key) || (key & 7) != 2 || !varint(&p, end, &n) || n > (uint64_t)(end - p))
            return false;
        if (key >> 3 == 1)
            k = p, klen = n;
        else if (key >> 3 == 2)
            val = p, vlen = n;
        p += n;
    }
    if (!k || vlen > (1u << 30))
        return false;
    char *ks = strndup((const char *)k, (size_t)klen);
    char *vs = bytes ? malloc((size_t)(vlen + 2) / 3 * 4 + 1) : strndup((const char *)val, (size_t)vlen);
    bool ok = ks && vs;
    if (ok && bytes)
        EVP_EncodeBlock((unsigned char *)vs, val, (int)vlen);
    if (ok)
        ks_json_set_str(obj, ks, vs);
    free(ks);
    free(vs);
    return ok;
}

static bool decode(const unsigned char *p, const unsigned char *end, const struct field *fields, cJSON *out)
{
    while (p < end) {
        uint64_t key, v;
        if (!varint(&p, end, &key))
            return false;
        unsigned num = (unsigned)(key >> 3), wire = (unsigned)(key & 7);
        const struct field *f = fields;
        while (f->num && f->num != num)
            f++;
        const unsigned char *data = NULL;
        if (wire == 0) {
            if (!varint(&p, end, &v))
                return false;
        } else if (wire == 2) {
            if (!varint(&p, end, &v) || v > (uint64_t)(end - p))
                return false;
            data = p;
            p += v;
        } else if (wire == 1 || wire == 5) {
            size_t len = wire == 1 ? 8 : 4;
            if ((size_t)(end - p) < len)
                return false;
            p += len;
            continue;
        } else {
            return false;
        }
        if (!f->num)
            continue;
        if (f->type == F_INT && wire == 0) {
            ks_json_set_num(out, f->json, (double)v);
        } else if (f->type == F_BOOL && wire == 0) {
            cJSON_DeleteItemFromObjectCaseSensitive(out, f->json);
            cJSON_AddBoolToObject(out, f->json, v != 0);
        } else if (data && (f->type == F_STRING_MAP || f->type == F_BYTES_MAP)) {
            if (!map_entry(data, data + v, f->type == F_BYTES_MAP, ks_json_obj(out, f->json)))
                return false;
        } else if (data && (f->type == F_STRING || f->type == F_STRINGS)) {
            char *s = strndup((const char *)data, (size_t)v);
            if (!s)
                return false;
            if (f->type == F_STRING) {
                ks_json_set_str(out, f->json, s);
            } else {
                cJSON *arr = cJSON_GetObjectItemCaseSensitive(out, f->json);
                if (!arr)
                    arr = cJSON_AddArrayToObject(out, f->json);
                cJSON_AddItemToArray(arr, cJSON_CreateString(s));
            }
            free(s);
        } else if (data && f->type == F_MSG) {
            if (!decode(data, data + v, f->msg, ks_json_obj(out, f->json)))
                return false;
        }
    }
    return true;
}

cJSON *ks_proto_decode(const char *body, size_t len)
{
    const unsigned char *p = (const unsigned char *)body, *end = p + len;
    if (len < 4 || memcmp(p, "k8s\0", 4))
        return NULL;
    p += 4;
    /* runtime.Unknown: 1 typeMeta, 2 raw (the object), 3 contentEncoding, 4 contentType */
    const unsigned char *raw = NULL;
    uint64_t raw_len = 0;
    cJSON *out = cJSON_CreateObject();
    while (p < end) {
        uint64_t key, v;
        if (!varint(&p, end, &key) || (key & 7) != 2 || !varint(&p, end, &v) || v > (uint64_t)(end - p))
            goto bad;
        if (key >> 3 == 1 && !decode(p, p + v, type_meta, out))
            goto bad;
        if (key >> 3 == 2) {
            raw = p;
            raw_len = v;
        }
        p += v;
    }
    const char *kind = ks_json_str(out, "kind");
    const struct field *schema = NULL;
    if (!kind || !raw)
        goto bad;
    if (!strcmp(kind, "SelfSubjectAccessReview") || !strcmp(kind, "SubjectAccessReview"))
        schema = access_review;
    else if (!strcmp(kind, "SelfSubjectRulesReview"))
        schema = rules_review;
    else if (!strcmp(kind, "TokenRequest"))
        schema = token_request;
    else if (!strcmp(kind, "Secret"))
        schema = secret;
    else if (!strcmp(kind, "DeleteOptions"))
        schema = delete_options;
    else if (!strcmp(kind, "Eviction"))
        schema = eviction;
    if (!schema || !decode(raw, raw + raw_len, schema, out))
        goto bad;
    return out;
bad:
    cJSON_Delete(out);
    return NULL;
}

cJSON *ks_body_json(const struct ks_req *req)
{
    if (!req->body || !req->body_len)
        return NULL;
    if (req->content_type && strstr(req->content_type, "protobuf"))
        return ks_proto_decode(req->body, req->body_len);
    return cJSON_ParseWithLength(req->body, req->body_len);
}
