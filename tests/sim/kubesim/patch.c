/* patch.c -- merge patch (RFC 7386), JSON patch (RFC 6902) and a minimal strategic merge patch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "kubesim.h"

/* ---- RFC 7386 ---- */

static cJSON *merge_value(cJSON *target, const cJSON *patch);

void ks_merge_patch(cJSON *target, const cJSON *patch)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, patch)
    {
        if (cJSON_IsNull(p)) {
            cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
            continue;
        }
        cJSON *cur = cJSON_DetachItemFromObjectCaseSensitive(target, p->string);
        cJSON_AddItemToObject(target, p->string, merge_value(cur, p));
    }
}

/* Takes target (may be NULL), returns the merged value. */
static cJSON *merge_value(cJSON *target, const cJSON *patch)
{
    if (!cJSON_IsObject(patch)) {
        cJSON_Delete(target);
        return cJSON_Duplicate(patch, true);
    }
    if (!cJSON_IsObject(target)) {
        cJSON_Delete(target);
        target = cJSON_CreateObject();
    }
    ks_merge_patch(target, patch);
    return target;
}

/* ---- RFC 6902 ---- */

/* Splits a JSON pointer ("/a/b~1c") into decoded tokens (~1 -> /, ~0 -> ~). */
static char **pointer_split(const char *ptr, size_t *n)
{
    char **toks = NULL;
    *n = 0;
    const char *s = ptr + 1;
    for (;;) {
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char *tok = rss_xmalloc(len + 1), *o = tok;
        for (size_t i = 0; i < len; i++) {
            if (s[i] == '~' && i + 1 < len && (s[i + 1] == '0' || s[i + 1] == '1')) {
                *o++ = s[i + 1] == '0' ? '~' : '/';
                i++;
            } else {
                *o++ = s[i];
            }
        }
        *o = '\0';
        toks = rss_xrealloc(toks, (*n + 1) * sizeof(*toks));
        toks[(*n)++] = tok;
        if (!e)
            return toks;
        s = e + 1;
    }
}

static bool parse_index(const char *tok, int size, bool allow_end, int *idx)
{
    if (allow_end && !strcmp(tok, "-")) {
        *idx = size;
        return true;
    }
    if (!*tok || (tok[0] == '0' && tok[1]))
        return false;
    char *end;
    long v = strtol(tok, &end, 10);
    if (*end || v < 0 || v > (allow_end ? size : size - 1))
        return false;
    *idx = (int)v;
    return true;
}

static cJSON *child(cJSON *cur, const char *tok)
{
    int idx;
    if (cJSON_IsObject(cur))
        return cJSON_GetObjectItemCaseSensitive(cur, tok);
    if (cJSON_IsArray(cur) && parse_index(tok, cJSON_GetArraySize(cur), false, &idx))
        return cJSON_GetArrayItem(cur, idx);
    return NULL;
}

/* Resolves the parent of the pointer's last token; *last gets that token (caller frees). */
static cJSON *resolve_parent(cJSON *doc, const char *ptr, char **last)
{
    *last = NULL;
    if (*ptr != '/')
        return NULL;
    size_t n;
    char **toks = pointer_split(ptr, &n);
    cJSON *cur = doc;
    for (size_t i = 0; i + 1 < n && cur; i++)
        cur = child(cur, toks[i]);
    *last = toks[n - 1];
    for (size_t i = 0; i + 1 < n; i++)
        free(toks[i]);
    free(toks);
    return cur;
}

static cJSON *get_ptr(cJSON *doc, const char *ptr)
{
    if (!*ptr)
        return doc;
    _cleanup_free_ char *last = NULL;
    cJSON *parent = resolve_parent(doc, ptr, &last);
    if (!parent)
        return NULL;
    int idx;
    if (cJSON_IsObject(parent))
        return cJSON_GetObjectItemCaseSensitive(parent, last);
    if (cJSON_IsArray(parent) && parse_index(last, cJSON_GetArraySize(parent), false, &idx))
        return cJSON_GetArrayItem(parent, idx);
    return NULL;
}

/* Detaches and returns the value at ptr, or NULL. */
static cJSON *detach_ptr(cJSON *doc, const char *ptr)
{
    _cleanup_free_ char *last = NULL;
    cJSON *parent = resolve_parent(doc, ptr, &last);
    int idx;
    if (!parent)
        return NULL;
    if (cJSON_IsObject(parent))
        return cJSON_DetachItemFromObjectCaseSensitive(parent, last);
    if (cJSON_IsArray(parent) && parse_index(last, cJSON_GetArraySize(parent), false, &idx))
        return cJSON_DetachItemFromArray(parent, idx);
    return NULL;
}

/* Adds (takes) value at ptr; replace=true requires an existing member. */
static bool put_ptr(cJSON **doc, const char *ptr, cJSON *value, bool replace)
{
    if (!*ptr) {
        cJSON_Delete(*doc);
        *doc = value;
        return true;
    }
    _cleanup_free_ char *last = NULL;
    cJSON *parent = resolve_parent(*doc, ptr, &last);
    int idx;
    if (cJSON_IsObject(parent)) {
        bool exists = cJSON_GetObjectItemCaseSensitive(parent, last) != NULL;
        if (replace && !exists)
            goto fail;
        ks_json_set(parent, last, value);
        return true;
    }
    if (cJSON_IsArray(parent)) {
        int size = cJSON_GetArraySize(parent);
        if (!parse_index(last, size, !replace, &idx))
            goto fail;
        if (replace)
            cJSON_ReplaceItemInArray(parent, idx, value);
        else if (idx == size)
            cJSON_AddItemToArray(parent, value);
        else
            cJSON_InsertItemInArray(parent, idx, value);
        return true;
    }
fail:
    cJSON_Delete(value);
    return false;
}

/* A `test` as evanphx/json-patch v4 does it: the parent must exist; a missing member or a null one equals
 * an absent or null "value"; anything else is compared as text (jsontext.c), or as values without the
 * request's text. */
static bool test_op(cJSON *doc, const char *path, const cJSON *value, const char *raw, size_t raw_len, int i)
{
    _cleanup_free_ char *last = NULL;
    cJSON *parent = *path ? resolve_parent(doc, path, &last) : NULL;
    const cJSON *cur = NULL;
    int idx;
    if (!*path)
        cur = doc;
    else if (cJSON_IsObject(parent))
        cur = cJSON_GetObjectItemCaseSensitive(parent, last);
    else if (cJSON_IsArray(parent) && parse_index(last, cJSON_GetArraySize(parent), false, &idx))
        cur = cJSON_GetArrayItem(parent, idx);
    else
        return false;
    const char *s = NULL, *e = NULL;
    bool has_raw = raw && ks_jsontext_op_value(raw, raw_len, i, &s, &e);
    bool vnull = !value || cJSON_IsNull(value);
    if (!cur || cJSON_IsNull(cur))
        return vnull;
    if (vnull)
        return false;
    return has_raw ? ks_jsontext_equal(cur, s, e) : cJSON_Compare(cur, value, true);
}

static const char *go_type(const cJSON *j)
{
    return cJSON_IsObject(j)   ? "object"
           : cJSON_IsString(j) ? "string"
           : cJSON_IsNumber(j) ? "number"
                               : "bool";
}

cJSON *ks_json_patch(const cJSON *doc, const cJSON *ops, const char *raw, size_t raw_len, int *code,
                     char *errbuf, size_t n)
{
    if (cJSON_IsNull(ops)) /* decodes to no operations */
        return cJSON_Duplicate(doc, true);
    if (!cJSON_IsArray(ops)) {
        *code = 400;
        snprintf(errbuf, n,
                 "error decoding patch: json: cannot unmarshal %s into Go value of type "
                 "[]handlers.jsonPatchOp",
                 go_type(ops));
        return NULL;
    }
    const cJSON *op;
    cJSON_ArrayForEach(op, ops)
    {
        if (!cJSON_IsObject(op) && !cJSON_IsNull(op)) {
            *code = 400;
            snprintf(errbuf, n,
                     "error decoding patch: json: cannot unmarshal %s into Go value of type "
                     "handlers.jsonPatchOp",
                     go_type(op));
            return NULL;
        }
    }
    cJSON *out = cJSON_Duplicate(doc, true);
    int i = 0;
    *code = 422; /* every operation that does not apply; the real server's message does not say which */
    cJSON_ArrayForEach(op, ops)
    {
        const char *name = ks_json_str(op, "op");
        const char *path = ks_json_str(op, "path");
        const char *from = ks_json_str(op, "from");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(op, "value");
        _cleanup_json_ cJSON *null = cJSON_CreateNull();
        if (!value) /* an absent value is JSON null, as the real server reads it */
            value = null;
        if (!name || !path) {
            snprintf(errbuf, n, "operation %d lacks \"op\" or \"path\"", i);
            goto fail;
        }
        if (!strcmp(name, "add") || !strcmp(name, "replace")) {
            /* v4's replace of an object member that is not there adds it; of an array index, it must be. */
            _cleanup_free_ char *last = NULL;
            cJSON *parent = *path ? resolve_parent(out, path, &last) : NULL;
            bool replace = name[0] == 'r' && !cJSON_IsObject(parent);
            if (!put_ptr(&out, path, cJSON_Duplicate(value, true), replace)) {
                snprintf(errbuf, n, "%s operation does not apply: doc is missing path: \"%s\"", name, path);
                goto fail;
            }
        } else if (!strcmp(name, "remove")) {
            cJSON *gone = *path ? detach_ptr(out, path) : NULL;
            if (!gone) {
                snprintf(errbuf, n, "remove operation does not apply: doc is missing path: \"%s\"", path);
                goto fail;
            }
            cJSON_Delete(gone);
        } else if (!strcmp(name, "move") || !strcmp(name, "copy")) {
            cJSON *src = from ? (name[0] == 'm' ? detach_ptr(out, from) : get_ptr(out, from)) : NULL;
            if (!src) {
                snprintf(errbuf, n, "%s operation does not apply: doc is missing from path: \"%s\"", name,
                         from ? from : "");
                goto fail;
            }
            if (name[0] == 'c')
                src = cJSON_Duplicate(src, true);
            if (!put_ptr(&out, path, src, false)) {
                snprintf(errbuf, n, "%s operation does not apply: doc is missing path: \"%s\"", name, path);
                goto fail;
            }
        } else if (!strcmp(name, "test")) {
            if (!test_op(out, path, value == null ? NULL : value, raw, raw_len, i)) {
                snprintf(errbuf, n, "testing value %s failed: test failed", path);
                goto fail;
            }
        } else {
            snprintf(errbuf, n, "Unexpected kind: %s", name);
            goto fail;
        }
        i++;
    }
    return out;
fail:
    cJSON_Delete(out);
    return NULL;
}

/* ---- strategic merge (minimal) ---- */

static const char *merge_key(const char *field, const cJSON *elem)
{
    static const struct {
        const char *field, *key;
    } keys[] = {
        {"containers", "name"},
        {"initContainers", "name"},
        {"ephemeralContainers", "name"},
        {"env", "name"},
        {"volumes", "name"},
        {"imagePullSecrets", "name"},
        {"volumeMounts", "mountPath"},
        {"conditions", "type"},
        {"hostAliases", "ip"},
        {"ownerReferences", "uid"},
        {"volumeDevices", "devicePath"},
        {"topologySpreadConstraints", "topologyKey"},
    };
    if (!field)
        return NULL;
    if (!strcmp(field, "ports")) /* container ports vs Service ports */
        return cJSON_GetObjectItemCaseSensitive(elem, "containerPort") ? "containerPort" : "port";
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (!strcmp(field, keys[i].field))
            return keys[i].key;
    }
    return NULL;
}

static void strategic_object(cJSON *target, const cJSON *patch);

static cJSON *find_by_key(cJSON *list, const char *key, const cJSON *val, int *idx)
{
    cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
        if (v && cJSON_Compare(v, val, true)) {
            *idx = i;
            return e;
        }
        i++;
    }
    return NULL;
}

static void strategic_list(cJSON *parent, const char *field, const cJSON *patch)
{
    cJSON *cur = cJSON_GetObjectItemCaseSensitive(parent, field);
    const cJSON *first = cJSON_GetArrayItem(patch, 0);
    const char *key = cJSON_IsObject(first) ? merge_key(field, first) : NULL;
    bool primitive_merge = !strcmp(field, "finalizers") && (!first || cJSON_IsString(first));
    if (!cJSON_IsArray(cur) || (!key && !primitive_merge)) {
        /* A lone {"$patch":"replace"} element or no merge key: replace the list. */
        cJSON *copy = cJSON_CreateArray();
        const cJSON *e;
        cJSON_ArrayForEach(e, patch)
        {
            if (cJSON_IsObject(e) && cJSON_GetObjectItemCaseSensitive(e, "$patch"))
                continue;
            cJSON_AddItemToArray(copy, cJSON_Duplicate(e, true));
        }
        ks_json_set(parent, field, copy);
        return;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, patch)
    {
        if (primitive_merge) {
            bool have = false;
            const cJSON *c;
            cJSON_ArrayForEach(c, cur) have = have || cJSON_Compare(c, e, true);
            if (!have)
                cJSON_AddItemToArray(cur, cJSON_Duplicate(e, true));
            continue;
        }
        const cJSON *kv = cJSON_GetObjectItemCaseSensitive(e, key);
        const char *directive = ks_json_str(e, "$patch");
        if (!kv)
            continue;
        int idx = -1;
        cJSON *match = find_by_key(cur, key, kv, &idx);
        if (directive && !strcmp(directive, "delete")) {
            if (match)
                cJSON_DeleteItemFromArray(cur, idx);
            continue;
        }
        if (directive && !strcmp(directive, "replace") && match) {
            cJSON *d = cJSON_Duplicate(e, true);
            cJSON_DeleteItemFromObjectCaseSensitive(d, "$patch");
            cJSON_ReplaceItemInArray(cur, idx, d);
            continue;
        }
        if (match) {
            strategic_object(match, e);
        } else {
            cJSON *d = cJSON_CreateObject();
            strategic_object(d, e);
            cJSON_AddItemToArray(cur, d);
        }
    }
}

static void strategic_object(cJSON *target, const cJSON *patch)
{
    const char *directive = ks_json_str(patch, "$patch");
    if (directive && !strcmp(directive, "replace")) {
        cJSON *child;
        while ((child = target->child))
            cJSON_Delete(cJSON_DetachItemViaPointer(target, child));
    }
    const cJSON *p;
    cJSON_ArrayForEach(p, patch)
    {
        const char *k = p->string;
        if (!strncmp(k, "$deleteFromPrimitiveList/", 25)) {
            cJSON *list = cJSON_GetObjectItemCaseSensitive(target, k + 25);
            const cJSON *d;
            cJSON_ArrayForEach(d, p)
            {
                for (int i = cJSON_GetArraySize(list) - 1; i >= 0; i--) {
                    if (cJSON_Compare(cJSON_GetArrayItem(list, i), d, true))
                        cJSON_DeleteItemFromArray(list, i);
                }
            }
            continue;
        }
        if (k[0] == '$') /* $setElementOrder, $retainKeys, $patch: ordering/pruning hints */
            continue;
        if (cJSON_IsNull(p)) {
            cJSON_DeleteItemFromObjectCaseSensitive(target, k);
        } else if (cJSON_IsObject(p)) {
            const char *sub = ks_json_str(p, "$patch");
            if (sub && !strcmp(sub, "delete")) {
                cJSON_DeleteItemFromObjectCaseSensitive(target, k);
                continue;
            }
            cJSON *cur = cJSON_GetObjectItemCaseSensitive(target, k);
            if (!cJSON_IsObject(cur)) {
                cur = cJSON_CreateObject();
                ks_json_set(target, k, cur);
            }
            strategic_object(cur, p);
        } else if (cJSON_IsArray(p)) {
            strategic_list(target, k, p);
        } else {
            ks_json_set(target, k, cJSON_Duplicate(p, true));
        }
    }
}

void ks_strategic_patch(cJSON *target, const cJSON *patch)
{
    strategic_object(target, patch);
}
