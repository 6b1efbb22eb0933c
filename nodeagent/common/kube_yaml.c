/* kube_yaml.c -- the small YAML subset kubeconfig files use, parsed into cJSON.
 *
 * Real kubeconfigs are written by kubectl, cloud CLIs and people: block mappings, block sequences
 * (often at the same indentation as their key), flow collections, quoted scalars and comments.
 * Anchors, tags, block scalars (| >) and multi-document streams are not used by them and are
 * rejected rather than misread. Every scalar stays a string (kubeconfig readers convert), except
 * null and ~.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "kube_internal.h"

struct line {
    int indent;
    char *text; /* content without indentation and comment; points into the owned copy */
    int lineno;
};

struct doc {
    struct line *lines;
    size_t n;
    size_t i; /* next unconsumed line */
};

/* Strips a comment: '#' at the start or after whitespace, outside quotes. Also trailing spaces. */
static void strip_comment(char *s)
{
    char quote = 0;
    for (char *p = s; *p; p++) {
        if (quote) {
            if (quote == '"' && *p == '\\' && p[1])
                p++;
            else if (*p == quote)
                quote = 0;
        } else if (*p == '"' || *p == '\'') {
            if (p == s || isspace((unsigned char)p[-1]) || strchr("[{,:", p[-1]))
                quote = *p;
        } else if (*p == '#' && (p == s || isspace((unsigned char)p[-1]))) {
            *p = '\0';
            break;
        }
    }
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
}

static int yaml_error(rss_error_t *err, int lineno, const char *what)
{
    return rss_error_make(err, RSS_E_INVALID, 0, "YAML line %d: %s", lineno, what);
}

/* --- scalars and flow collections --- */

static void skip_ws(const char **p)
{
    while (**p == ' ' || **p == '\t' || **p == '\n')
        (*p)++;
}

static int parse_quoted(const char **p, char **out, int lineno, rss_error_t *err)
{
    char q = **p;
    const char *s = *p + 1;
    size_t cap = strlen(s) + 1, n = 0;
    _cleanup_free_ char *buf = rss_xmalloc(cap);
    for (;;) {
        if (!*s)
            return yaml_error(err, lineno, "unterminated quoted string");
        if (*s == q) {
            if (q == '\'' && s[1] == '\'') {
                buf[n++] = '\'';
                s += 2;
                continue;
            }
            s++;
            break;
        }
        if (q == '"' && *s == '\\') {
            s++;
            char c = *s;
            switch (c) {
            case 'n':
                buf[n++] = '\n';
                break;
            case 't':
                buf[n++] = '\t';
                break;
            case 'r':
                buf[n++] = '\r';
                break;
            case '0':
                return yaml_error(err, lineno, "NUL in string");
            case '"':
            case '\\':
            case '/':
            case ' ':
                buf[n++] = c;
                break;
            case 'u': {
                unsigned v = 0;
                for (int k = 1; k <= 4; k++) {
                    if (!isxdigit((unsigned char)s[k]))
                        return yaml_error(err, lineno, "bad \\u escape");
                    v = v * 16 + (unsigned)(isdigit((unsigned char)s[k])
                                                ? s[k] - '0'
                                                : (tolower((unsigned char)s[k]) - 'a' + 10));
                }
                if (v == 0)
                    return yaml_error(err, lineno, "NUL in string");
                /* UTF-8 encode (BMP only; kubeconfig values are ASCII in practice). */
                if (v < 0x80) {
                    buf[n++] = (char)v;
                } else if (v < 0x800) {
                    buf[n++] = (char)(0xc0 | (v >> 6));
                    buf[n++] = (char)(0x80 | (v & 0x3f));
                } else {
                    buf[n++] = (char)(0xe0 | (v >> 12));
                    buf[n++] = (char)(0x80 | ((v >> 6) & 0x3f));
                    buf[n++] = (char)(0x80 | (v & 0x3f));
                }
                s += 4;
                break;
            }
            default:
                return yaml_error(err, lineno, "unsupported escape in double-quoted string");
            }
            s++;
            continue;
        }
        buf[n++] = *s++;
    }
    buf[n] = '\0';
    *p = s;
    *out = TAKE_PTR(buf);
    return 0;
}

static cJSON *plain_scalar(const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if ((n == 4 && !strncmp(s, "null", 4)) || (n == 1 && s[0] == '~') || n == 0)
        return cJSON_CreateNull();
    _cleanup_free_ char *v = rss_xmalloc(n + 1);
    memcpy(v, s, n);
    v[n] = '\0';
    return cJSON_CreateString(v);
}

static int parse_flow(const char **p, cJSON **ret, int lineno, int depth, rss_error_t *err);

/* A scalar inside a flow collection ends at ',', ']' or '}'. */
static int parse_flow_scalar(const char **p, bool is_key, cJSON **ret, int lineno, rss_error_t *err)
{
    if (**p == '"' || **p == '\'') {
        _cleanup_free_ char *s = NULL;
        if (parse_quoted(p, &s, lineno, err) < 0)
            return -1;
        *ret = cJSON_CreateString(s);
        return 0;
    }
    const char *s = *p;
    while (**p && !strchr(",]}", **p)) {
        if (is_key && **p == ':' && ((*p)[1] == ' ' || (*p)[1] == '\0' || strchr(",]}", (*p)[1])))
            break;
        (*p)++;
    }
    *ret = plain_scalar(s, (size_t)(*p - s));
    return 0;
}

static int parse_flow(const char **p, cJSON **ret, int lineno, int depth, rss_error_t *err)
{
    if (depth > 64)
        return yaml_error(err, lineno, "nesting too deep");
    skip_ws(p);
    if (**p != '[' && **p != '{')
        return parse_flow_scalar(p, false, ret, lineno, err);
    bool is_map = **p == '{';
    char close = is_map ? '}' : ']';
    (*p)++;
    _cleanup_json_ cJSON *c = is_map ? cJSON_CreateObject() : cJSON_CreateArray();
    for (;;) {
        skip_ws(p);
        if (**p == close) {
            (*p)++;
            break;
        }
        if (!**p)
            return yaml_error(err, lineno, "unterminated flow collection");
        if (is_map) {
            _cleanup_json_ cJSON *key = NULL;
            if (parse_flow_scalar(p, true, &key, lineno, err) < 0)
                return -1;
            if (!cJSON_IsString(key))
                return yaml_error(err, lineno, "flow mapping key is not a string");
            skip_ws(p);
            cJSON *val = NULL;
            if (**p == ':') {
                (*p)++;
                skip_ws(p);
                if (**p == ',' || **p == '}')
                    val = cJSON_CreateNull();
                else if (parse_flow(p, &val, lineno, depth + 1, err) < 0)
                    return -1;
            } else {
                val = cJSON_CreateNull();
            }
            cJSON_AddItemToObject(c, key->valuestring, val);
        } else {
            cJSON *val = NULL;
            if (parse_flow(p, &val, lineno, depth + 1, err) < 0)
                return -1;
            cJSON_AddItemToArray(c, val);
        }
        skip_ws(p);
        if (**p == ',')
            (*p)++;
        else if (**p != close)
            return yaml_error(err, lineno, "expected ',' in flow collection");
    }
    *ret = TAKE_PTR(c);
    return 0;
}

/* Whether brackets opened on a flow value are balanced (outside quotes). */
static int flow_balance(const char *s)
{
    int depth = 0;
    char quote = 0;
    for (; *s; s++) {
        if (quote) {
            if (quote == '"' && *s == '\\' && s[1])
                s++;
            else if (*s == quote)
                quote = 0;
        } else if (*s == '"' || *s == '\'') {
            quote = *s;
        } else if (*s == '[' || *s == '{') {
            depth++;
        } else if (*s == ']' || *s == '}') {
            depth--;
        }
    }
    return depth;
}

/* A value written on the key's line (or after "- "): flow collection, quoted or plain scalar. Flow
 * collections may continue on following lines until their brackets balance. */
static int parse_inline_value(struct doc *d, const char *v, int lineno, cJSON **ret, rss_error_t *err)
{
    if (*v == '|' || *v == '>')
        return yaml_error(err, lineno, "block scalars are not supported");
    if (*v == '&' || *v == '*' || *v == '!')
        return yaml_error(err, lineno, "anchors, aliases and tags are not supported");
    if (*v == '[' || *v == '{') {
        _cleanup_free_ char *all = rss_xstrdup(v);
        while (flow_balance(all) > 0) {
            if (d->i >= d->n)
                return yaml_error(err, lineno, "unterminated flow collection");
            char *more = rss_xasprintf("%s\n%s", all, d->lines[d->i++].text);
            free(all);
            all = more;
        }
        const char *p = all;
        if (parse_flow(&p, ret, lineno, 0, err) < 0)
            return -1;
        skip_ws(&p);
        if (*p) {
            cJSON_Delete(*ret);
            *ret = NULL;
            return yaml_error(err, lineno, "text after flow collection");
        }
        return 0;
    }
    if (*v == '"' || *v == '\'') {
        const char *p = v;
        _cleanup_free_ char *s = NULL;
        if (parse_quoted(&p, &s, lineno, err) < 0)
            return -1;
        skip_ws(&p);
        if (*p)
            return yaml_error(err, lineno, "text after quoted string");
        *ret = cJSON_CreateString(s);
        return 0;
    }
    *ret = plain_scalar(v, strlen(v));
    return 0;
}

/* Finds the ':' that separates a block mapping key from its value: followed by space or the end,
 * outside quotes. Returns NULL when the line is not "key: ...". */
static char *find_colon(char *s)
{
    char quote = 0;
    for (char *p = s; *p; p++) {
        if (quote) {
            if (quote == '"' && *p == '\\' && p[1])
                p++;
            else if (*p == quote)
                quote = 0;
        } else if ((*p == '"' || *p == '\'') && p == s) {
            quote = *p;
        } else if (*p == ':' && (p[1] == ' ' || p[1] == '\t' || p[1] == '\0')) {
            return p;
        } else if ((*p == '[' || *p == '{') && p == s) {
            return NULL;
        }
    }
    return NULL;
}

static bool is_seq_item(const char *t)
{
    return t[0] == '-' && (t[1] == ' ' || t[1] == '\0');
}

static int parse_block(struct doc *d, int indent, int depth, cJSON **ret, rss_error_t *err);

static int parse_seq(struct doc *d, int indent, int depth, cJSON **ret, rss_error_t *err)
{
    _cleanup_json_ cJSON *arr = cJSON_CreateArray();
    while (d->i < d->n && d->lines[d->i].indent == indent && is_seq_item(d->lines[d->i].text)) {
        struct line *l = &d->lines[d->i];
        char *rest = l->text + 1;
        int off = 1;
        while (*rest == ' ' || *rest == '\t') {
            rest++;
            off++;
        }
        cJSON *item = NULL;
        if (!*rest) {
            d->i++;
            if (d->i < d->n && d->lines[d->i].indent > indent) {
                if (parse_block(d, d->lines[d->i].indent, depth + 1, &item, err) < 0)
                    return -1;
            } else {
                item = cJSON_CreateNull();
            }
        } else {
            /* "- key: v" starts a mapping whose further keys sit at the column of "key". */
            l->indent = indent + off;
            l->text = rest;
            if (find_colon(rest) || is_seq_item(rest)) {
                if (parse_block(d, l->indent, depth + 1, &item, err) < 0)
                    return -1;
            } else {
                d->i++;
                if (parse_inline_value(d, rest, l->lineno, &item, err) < 0)
                    return -1;
            }
        }
        cJSON_AddItemToArray(arr, item);
    }
    *ret = TAKE_PTR(arr);
    return 0;
}

static int parse_map(struct doc *d, int indent, int depth, cJSON **ret, rss_error_t *err)
{
    _cleanup_json_ cJSON *obj = cJSON_CreateObject();
    while (d->i < d->n && d->lines[d->i].indent == indent && !is_seq_item(d->lines[d->i].text)) {
        struct line *l = &d->lines[d->i];
        char *colon = find_colon(l->text);
        if (!colon)
            return yaml_error(err, l->lineno, "expected 'key: value'");
        *colon = '\0';
        _cleanup_free_ char *key = NULL;
        if (l->text[0] == '"' || l->text[0] == '\'') {
            const char *p = l->text;
            if (parse_quoted(&p, &key, l->lineno, err) < 0)
                return -1;
        } else {
            key = rss_xstrdup(l->text);
            size_t n = strlen(key);
            while (n > 0 && isspace((unsigned char)key[n - 1]))
                key[--n] = '\0';
        }
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        int lineno = l->lineno;
        d->i++;
        cJSON *val = NULL;
        if (*v) {
            if (parse_inline_value(d, v, lineno, &val, err) < 0)
                return -1;
        } else if (d->i < d->n && d->lines[d->i].indent > indent) {
            if (parse_block(d, d->lines[d->i].indent, depth + 1, &val, err) < 0)
                return -1;
        } else if (d->i < d->n && d->lines[d->i].indent == indent && is_seq_item(d->lines[d->i].text)) {
            /* kubectl writes "contexts:\n- name: x": the sequence at the key's own indentation. */
            if (parse_seq(d, indent, depth + 1, &val, err) < 0)
                return -1;
        } else {
            val = cJSON_CreateNull();
        }
        if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
            cJSON_Delete(val);
            return yaml_error(err, lineno, "duplicate key");
        }
        cJSON_AddItemToObject(obj, key, val);
    }
    *ret = TAKE_PTR(obj);
    return 0;
}

static int parse_block(struct doc *d, int indent, int depth, cJSON **ret, rss_error_t *err)
{
    if (depth > 64)
        return yaml_error(err, d->lines[d->i].lineno, "nesting too deep");
    struct line *l = &d->lines[d->i];
    if (is_seq_item(l->text))
        return parse_seq(d, indent, depth, ret, err);
    if (find_colon(l->text))
        return parse_map(d, indent, depth, ret, err);
    /* A lone scalar or flow collection. */
    d->i++;
    return parse_inline_value(d, l->text, l->lineno, ret, err);
}

int kube_yaml_parse(const char *text, cJSON **ret, rss_error_t *err)
{
    _cleanup_free_ char *copy = rss_xstrdup(text);
    _cleanup_free_ struct line *lines = NULL;
    size_t n = 0, cap = 0;
    int lineno = 0;
    bool started = false;
    /* Split by hand: strtok would merge empty lines and lose line numbers. */
    char *p = copy;
    while (p && *p) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        lineno++;
        size_t len = strlen(p);
        if (len > 0 && p[len - 1] == '\r')
            p[len - 1] = '\0';
        int indent = 0;
        while (p[indent] == ' ')
            indent++;
        if (p[indent] == '\t')
            return yaml_error(err, lineno, "tab used for indentation");
        char *t = p + indent;
        strip_comment(t);
        if (!strcmp(t, "---")) {
            if (started)
                return yaml_error(err, lineno, "multiple documents are not supported");
        } else if (!strcmp(t, "...")) {
            break;
        } else if (*t == '%') {
            if (started)
                return yaml_error(err, lineno, "directive inside a document");
        } else if (*t) {
            started = true;
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                lines = rss_xrealloc(lines, cap * sizeof(*lines));
            }
            lines[n++] = (struct line){.indent = indent, .text = t, .lineno = lineno};
        }
        p = nl ? nl + 1 : NULL;
    }
    if (n == 0)
        return rss_error_make(err, RSS_E_INVALID, 0, "YAML: empty document");
    struct doc d = {.lines = lines, .n = n, .i = 0};
    _cleanup_json_ cJSON *root = NULL;
    if (parse_block(&d, lines[0].indent, 0, &root, err) < 0)
        return -1;
    if (d.i < d.n)
        return yaml_error(err, d.lines[d.i].lineno, "unexpected indentation");
    *ret = TAKE_PTR(root);
    return 0;
}
