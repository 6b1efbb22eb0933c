/* selector.c -- label selectors (=, ==, !=, in, notin, exists, !key) and field selectors. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "kubesim.h"

enum op { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS };

struct term {
    enum op op;
    char *key;
    char **vals;
    size_t nvals;
};

struct ks_selector {
    bool field;
    struct term *t;
    size_t n;
};

void ks_selector_free(struct ks_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++) {
        free(sel->t[i].key);
        for (size_t j = 0; j < sel->t[i].nvals; j++)
            free(sel->t[i].vals[j]);
        free(sel->t[i].vals);
    }
    free(sel->t);
    free(sel);
}

static char *trim_dup(const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    char *r = rss_xmalloc(len + 1);
    memcpy(r, s, len);
    r[len] = '\0';
    return r;
}

static struct term *add_term(struct ks_selector *sel)
{
    sel->t = rss_xrealloc(sel->t, (sel->n + 1) * sizeof(*sel->t));
    struct term *t = &sel->t[sel->n++];
    memset(t, 0, sizeof(*t));
    return t;
}

static void add_val(struct term *t, char *v)
{
    t->vals = rss_xrealloc(t->vals, (t->nvals + 1) * sizeof(*t->vals));
    t->vals[t->nvals++] = v;
}

/* Splits on commas outside parentheses. */
static int parse_terms(struct ks_selector *sel, const char *s, char *errbuf, size_t n)
{
    while (*s) {
        int depth = 0;
        const char *p = s;
        for (; *p && (depth || *p != ','); p++) {
            if (*p == '(')
                depth++;
            else if (*p == ')')
                depth--;
        }
        _cleanup_free_ char *term = trim_dup(s, (size_t)(p - s));
        s = *p ? p + 1 : p;
        if (!*term) {
            snprintf(errbuf, n, "found '', expected: identifier");
            return -1;
        }
        struct term *t = add_term(sel);
        char *q;
        if (term[0] == '!') {
            t->op = OP_NOTEXISTS;
            t->key = trim_dup(term + 1, strlen(term + 1));
        } else if ((q = strstr(term, "!="))) {
            t->op = OP_NE;
            t->key = trim_dup(term, (size_t)(q - term));
            add_val(t, trim_dup(q + 2, strlen(q + 2)));
        } else if ((q = strstr(term, "=="))) {
            t->op = OP_EQ;
            t->key = trim_dup(term, (size_t)(q - term));
            add_val(t, trim_dup(q + 2, strlen(q + 2)));
        } else if ((q = strchr(term, '='))) {
            t->op = OP_EQ;
            t->key = trim_dup(term, (size_t)(q - term));
            add_val(t, trim_dup(q + 1, strlen(q + 1)));
        } else if (!sel->field && ((q = strstr(term, " in ")) || (q = strstr(term, " in(")) ||
                                   (q = strstr(term, " notin ")) || (q = strstr(term, " notin(")))) {
            t->op = q[1] == 'i' ? OP_IN : OP_NOTIN;
            t->key = trim_dup(term, (size_t)(q - term));
            const char *open = strchr(q, '(');
            const char *close = open ? strrchr(open, ')') : NULL;
            if (!open || !close) {
                snprintf(errbuf, n, "unable to parse requirement: %s: expected '(' ... ')'", term);
                return -1;
            }
            const char *v = open + 1;
            while (v < close) {
                const char *c = memchr(v, ',', (size_t)(close - v));
                const char *e = c ? c : close;
                char *val = trim_dup(v, (size_t)(e - v));
                if (*val)
                    add_val(t, val);
                else
                    free(val);
                v = e + 1;
            }
            if (!t->nvals) {
                snprintf(errbuf, n, "for 'in', 'notin' operators, values set can't be empty");
                return -1;
            }
        } else if (!sel->field) {
            t->op = OP_EXISTS;
            t->key = rss_xstrdup(term);
        } else {
            snprintf(errbuf, n, "invalid selector: '%s'; can't understand '%s'", term, term);
            return -1;
        }
        if (!*t->key || strchr(t->key, ' ')) {
            snprintf(errbuf, n, "unable to parse requirement: invalid label key \"%s\"", t->key);
            return -1;
        }
    }
    return 0;
}

struct ks_selector *ks_label_selector_parse(const char *s, char *errbuf, size_t n)
{
    struct ks_selector *sel = rss_xcalloc(1, sizeof(*sel));
    if (s && parse_terms(sel, s, errbuf, n) < 0) {
        ks_selector_free(sel);
        return NULL;
    }
    return sel;
}

struct ks_selector *ks_field_selector_parse(const char *s, const struct ks_resource *res, char *errbuf,
                                            size_t n)
{
    struct ks_selector *sel = rss_xcalloc(1, sizeof(*sel));
    sel->field = true;
    if (s && parse_terms(sel, s, errbuf, n) < 0) {
        ks_selector_free(sel);
        return NULL;
    }
    for (size_t i = 0; i < sel->n; i++) {
        const char *k = sel->t[i].key;
        bool ok = !strcmp(k, "metadata.name") || !strcmp(k, "metadata.namespace");
        for (const char *const *f = res->fields; f && *f && !ok; f++)
            ok = !strcmp(*f, k);
        if (!ok) {
            snprintf(errbuf, n, "field label not supported: %s", k);
            ks_selector_free(sel);
            return NULL;
        }
    }
    return sel;
}

static const char *field_value(const cJSON *obj, const char *key, char *buf, size_t n)
{
    if (!strcmp(key, "source"))
        key = "source.component";
    const cJSON *v = ks_json_path(obj, key);
    if (cJSON_IsString(v))
        return v->valuestring;
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? "true" : "false";
    if (cJSON_IsNumber(v)) {
        snprintf(buf, n, "%.0f", v->valuedouble);
        return buf;
    }
    if (!strcmp(key, "spec.hostNetwork") || !strcmp(key, "spec.unschedulable"))
        return "false";
    return "";
}

bool ks_selector_match(const struct ks_selector *sel, const cJSON *obj)
{
    if (!sel)
        return true;
    const cJSON *labels = ks_json_path(obj, "metadata.labels");
    for (size_t i = 0; i < sel->n; i++) {
        const struct term *t = &sel->t[i];
        const char *val;
        char buf[64];
        if (sel->field) {
            val = field_value(obj, t->key, buf, sizeof(buf));
        } else {
            const cJSON *l = cJSON_IsObject(labels) ? cJSON_GetObjectItemCaseSensitive(labels, t->key) : NULL;
            val = cJSON_IsString(l) ? l->valuestring : NULL;
        }
        bool in = false;
        for (size_t j = 0; val && j < t->nvals; j++)
            in = in || !strcmp(val, t->vals[j]);
        switch (t->op) {
        case OP_EQ:
        case OP_IN:
            if (!in)
                return false;
            break;
        case OP_NE:
        case OP_NOTIN:
            /* As in apimachinery: a missing label satisfies != and notin. */
            if (in)
                return false;
            break;
        case OP_EXISTS:
            if (!val)
                return false;
            break;
        case OP_NOTEXISTS:
            if (val)
                return false;
            break;
        }
    }
    return true;
}
