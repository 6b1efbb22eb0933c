/* kube_yaml.c -- kubeconfig YAML parsed with libyaml into cJSON (the first document of the stream).
 *
 * Kubeconfigs are written by kubectl, cloud CLIs and people, so the whole of YAML 1.1 that libyaml reads
 * is accepted: block and flow collections, quoted and block scalars (| >), comments, anchors and aliases,
 * several documents (client-go reads the first, and so does rssd). Every scalar stays a string (the
 * kubeconfig reader converts), except an unquoted null, ~ or empty value, which is JSON null. A duplicate
 * key, a non-scalar key, an alias to an unknown anchor or nesting deeper than MAX_DEPTH is an error rather
 * than a guess.
 */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "rss/cleanup.h"
#include "kube_internal.h"

#define MAX_DEPTH   64
#define MAX_ANCHORS 1024
/* An alias copies its anchor's value: bounded, so a "billion laughs" document cannot blow up. */
#define MAX_NODES 200000

struct anchor {
    char *name;
    cJSON *value; /* borrowed: lives in the tree */
};

struct yparse {
    yaml_parser_t parser;
    struct anchor anchors[MAX_ANCHORS];
    size_t n_anchors;
    size_t nodes;
    rss_error_t *err;
};

static int fail(struct yparse *y, const yaml_mark_t *mark, const char *what)
{
    return rss_error_make(y->err, RSS_E_INVALID, 0, "YAML line %zu: %s", mark->line + 1, what);
}

static void event_delete(yaml_event_t *e)
{
    yaml_event_delete(e);
}

static int next(struct yparse *y, yaml_event_t *e)
{
    if (yaml_parser_parse(&y->parser, e))
        return 0;
    return rss_error_make(y->err, RSS_E_INVALID, 0, "YAML line %zu: %s", y->parser.problem_mark.line + 1,
                          y->parser.problem ? y->parser.problem : "malformed");
}

/* Counts nodes, including those an alias duplicates. */
static size_t count_nodes(const cJSON *v)
{
    size_t n = 1;
    for (const cJSON *c = v->child; c; c = c->next)
        n += count_nodes(c);
    return n;
}

static int remember(struct yparse *y, const yaml_char_t *anchor, cJSON *value, const yaml_mark_t *mark)
{
    if (!anchor)
        return 0;
    if (y->n_anchors == MAX_ANCHORS)
        return fail(y, mark, "too many anchors");
    y->anchors[y->n_anchors++] = (struct anchor){rss_xstrdup((const char *)anchor), value};
    return 0;
}

static int parse_node(struct yparse *y, yaml_event_t *e, int depth, cJSON **out);

/* Parses the events after a MAPPING_START or SEQUENCE_START into *out. */
static int parse_collection(struct yparse *y, bool mapping, int depth, cJSON *coll)
{
    for (;;) {
        _cleanup_(event_delete) yaml_event_t e = {0};
        if (next(y, &e) < 0)
            return -1;
        if (e.type == (mapping ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT))
            return 0;
        if (!mapping) {
            cJSON *item = NULL;
            if (parse_node(y, &e, depth + 1, &item) < 0)
                return -1;
            cJSON_AddItemToArray(coll, item);
            continue;
        }
        if (e.type != YAML_SCALAR_EVENT)
            return fail(y, &e.start_mark, "a mapping key must be a scalar");
        _cleanup_free_ char *key = rss_xstrndup((const char *)e.data.scalar.value, e.data.scalar.length);
        if (strlen(key) != e.data.scalar.length)
            return fail(y, &e.start_mark, "a key contains a NUL byte");
        if (cJSON_GetObjectItemCaseSensitive(coll, key))
            return fail(y, &e.start_mark, "duplicate key");
        _cleanup_(event_delete) yaml_event_t v = {0};
        if (next(y, &v) < 0)
            return -1;
        cJSON *value = NULL;
        if (parse_node(y, &v, depth + 1, &value) < 0)
            return -1;
        cJSON_AddItemToObject(coll, key, value);
    }
}

static int parse_node(struct yparse *y, yaml_event_t *e, int depth, cJSON **out)
{
    if (depth > MAX_DEPTH)
        return fail(y, &e->start_mark, "nested too deeply");
    if (++y->nodes > MAX_NODES)
        return fail(y, &e->start_mark, "too many nodes");
    switch (e->type) {
    case YAML_SCALAR_EVENT: {
        const char *v = (const char *)e->data.scalar.value;
        size_t len = e->data.scalar.length;
        if (strlen(v) != len)
            return fail(y, &e->start_mark, "a value contains a NUL byte");
        bool plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (plain &&
            (len == 0 || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL")))
            *out = cJSON_CreateNull();
        else
            *out = cJSON_CreateString(v);
        return remember(y, e->data.scalar.anchor, *out, &e->start_mark);
    }
    case YAML_ALIAS_EVENT:
        for (size_t i = 0; i < y->n_anchors; i++)
            if (!strcmp(y->anchors[i].name, (const char *)e->data.alias.anchor)) {
                y->nodes += count_nodes(y->anchors[i].value);
                if (y->nodes > MAX_NODES)
                    return fail(y, &e->start_mark, "too many nodes (aliases)");
                *out = cJSON_Duplicate(y->anchors[i].value, true);
                return 0;
            }
        return fail(y, &e->start_mark, "alias to an unknown anchor");
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
        bool mapping = e->type == YAML_MAPPING_START_EVENT;
        cJSON *coll = mapping ? cJSON_CreateObject() : cJSON_CreateArray();
        const yaml_char_t *anchor = mapping ? e->data.mapping_start.anchor : e->data.sequence_start.anchor;
        /* Registered once complete: an alias inside its own anchor (a recursive document) finds no
         * anchor and is an error. */
        if (parse_collection(y, mapping, depth, coll) < 0 || remember(y, anchor, coll, &e->start_mark) < 0) {
            cJSON_Delete(coll);
            return -1;
        }
        *out = coll;
        return 0;
    }
    default:
        return fail(y, &e->start_mark, "unexpected YAML event");
    }
}

int kube_yaml_parse(const char *text, cJSON **ret, rss_error_t *err)
{
    *ret = NULL;
    struct yparse y = {.err = err};
    if (!yaml_parser_initialize(&y.parser))
        return rss_error_make(err, RSS_E_INVALID, 0, "YAML: cannot initialise the parser");
    yaml_parser_set_input_string(&y.parser, (const unsigned char *)text, strlen(text));
    cJSON *root = NULL;
    int r = -1;
    for (;;) {
        _cleanup_(event_delete) yaml_event_t e = {0};
        if (next(&y, &e) < 0)
            break;
        if (e.type == YAML_STREAM_START_EVENT || e.type == YAML_DOCUMENT_START_EVENT)
            continue;
        if (e.type == YAML_STREAM_END_EVENT) {
            rss_error_make(err, RSS_E_INVALID, 0, "YAML: empty document");
            break;
        }
        /* The root node of the first document; later documents are not read (client-go's rule). */
        r = parse_node(&y, &e, 0, &root);
        break;
    }
    for (size_t i = 0; i < y.n_anchors; i++)
        free(y.anchors[i].name);
    yaml_parser_delete(&y.parser);
    if (r < 0) {
        cJSON_Delete(root);
        return -1;
    }
    *ret = root;
    return 0;
}
