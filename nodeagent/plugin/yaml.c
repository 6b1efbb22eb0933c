/* yaml.c -- prints a JSON value as YAML (-o yaml): block mappings and sequences, every string
 * double-quoted with JSON's escapes (valid YAML), so that no value is read back as another type. */
#include <string.h>
#include <strings.h>

#include "rss/cleanup.h"
#include "plugin_internal.h"

static void indent(FILE *f, int n)
{
    for (int i = 0; i < n; i++)
        fputs("  ", f);
}

/* A key printed plain when YAML cannot read it as anything but that string. */
static bool plain_key(const char *k)
{
    if (!*k || strchr("-?:,[]{}#&*!|>'\"%@` ", k[0]))
        return false;
    for (const char *p = k; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("_-./", *p)))
            return false;
    static const char *const words[] = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (!strcasecmp(k, words[i]))
            return false;
    return !(k[0] >= '0' && k[0] <= '9') && k[0] != '.';
}

static void scalar(FILE *f, const cJSON *v)
{
    _cleanup_free_ char *s = cJSON_PrintUnformatted(v); /* strings quoted and escaped as JSON */
    fputs(s ? s : "null", f);
}

static bool empty_container(const cJSON *v)
{
    return (cJSON_IsObject(v) || cJSON_IsArray(v)) && !v->child;
}

static void node(FILE *f, const cJSON *v, int level);

/* An entry's value after "key:" or "-": inline when a scalar or empty, else on the next lines. */
static void value(FILE *f, const cJSON *v, int level)
{
    if ((cJSON_IsObject(v) || cJSON_IsArray(v)) && !empty_container(v)) {
        fputc('\n', f);
        node(f, v, level);
    } else {
        fputc(' ', f);
        if (empty_container(v))
            fputs(cJSON_IsArray(v) ? "[]" : "{}", f);
        else
            scalar(f, v);
        fputc('\n', f);
    }
}

static void node(FILE *f, const cJSON *v, int level)
{
    const cJSON *e;
    if (cJSON_IsObject(v)) {
        cJSON_ArrayForEach(e, v)
        {
            indent(f, level);
            if (plain_key(e->string)) {
                fputs(e->string, f);
            } else {
                _cleanup_json_ cJSON *k = cJSON_CreateString(e->string);
                scalar(f, k);
            }
            fputc(':', f);
            value(f, e, level + 1);
        }
    } else if (cJSON_IsArray(v)) {
        cJSON_ArrayForEach(e, v)
        {
            indent(f, level);
            fputc('-', f);
            value(f, e, level + 1);
        }
    }
}

void plugin_print_yaml(FILE *f, const cJSON *v)
{
    if (!v) {
        fputs("null\n", f);
    } else if (empty_container(v) || !(cJSON_IsObject(v) || cJSON_IsArray(v))) {
        if (empty_container(v))
            fputs(cJSON_IsArray(v) ? "[]" : "{}", f);
        else
            scalar(f, v);
        fputc('\n', f);
    } else {
        node(f, v, 0);
    }
}
