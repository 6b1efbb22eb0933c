/* cri_tool.c -- world-cri: a tiny crictl for the test world (ps, pods, find, exec, inspect) on rssd's CRI
 * client.
 *
 * world-cri --endpoint unix://SOCK ps [--json] | pods [--json] | find NS POD CONTAINER
 *           | exec [--timeout S] ID CMD [ARG...] | inspect ID
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/cri.h"
#include "cri_lifecycle.h"
#include "rss/log.h"

static cJSON *map_json(const struct rss_cri_map *m)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < m->n; i++)
        cJSON_AddStringToObject(o, m->items[i].key, m->items[i].value);
    return o;
}

static cJSON *container_json(const struct rss_cri_container *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", c->id);
    cJSON_AddStringToObject(o, "sandboxId", c->sandbox_id);
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddNumberToObject(o, "attempt", c->attempt);
    cJSON_AddStringToObject(o, "state", rss_cri_container_state_name(c->state));
    cJSON_AddStringToObject(o, "image", c->image ? c->image : "");
    cJSON_AddNumberToObject(o, "createdAt", (double)c->created_at);
    if (c->finished_at || c->started_at) {
        cJSON_AddNumberToObject(o, "exitCode", c->exit_code);
        cJSON_AddStringToObject(o, "reason", c->reason ? c->reason : "");
        cJSON_AddStringToObject(o, "logPath", c->log_path ? c->log_path : "");
    }
    cJSON_AddItemToObject(o, "labels", map_json(&c->labels));
    cJSON_AddItemToObject(o, "annotations", map_json(&c->annotations));
    return o;
}

static void print_json(cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    puts(s);
    free(s);
    cJSON_Delete(o);
}

static int cmd_ps(struct rss_cri *cri, bool json, rss_error_t *err)
{
    struct rss_cri_container_list l = {0};
    if (rss_cri_list_containers(cri, NULL, &l, err) < 0)
        return -1;
    if (!json)
        printf("%-13s %-8s %-18s %-32s %-12s %s\n", "CONTAINER", "ATTEMPT", "STATE", "POD", "NAME",
               "SANDBOX");
    for (size_t i = 0; i < l.n; i++) {
        const struct rss_cri_container *c = &l.items[i];
        if (json) {
            print_json(container_json(c));
            continue;
        }
        const char *ns = rss_cri_map_get(&c->labels, "io.kubernetes.pod.namespace");
        const char *pod = rss_cri_map_get(&c->labels, "io.kubernetes.pod.name");
        _cleanup_free_ char *p = rss_xasprintf("%s/%s", ns ? ns : "?", pod ? pod : "?");
        printf("%-13.13s %-8u %-18s %-32s %-12s %.13s\n", c->id, c->attempt,
               rss_cri_container_state_name(c->state), p, c->name, c->sandbox_id);
    }
    rss_cri_container_list_clear(&l);
    return 0;
}

static int cmd_pods(struct rss_cri *cri, bool json, rss_error_t *err)
{
    struct rss_cri_sandbox_list l = {0};
    if (rss_cri_list_sandboxes(cri, NULL, &l, err) < 0)
        return -1;
    if (!json)
        printf("%-13s %-8s %-9s %s\n", "SANDBOX", "ATTEMPT", "STATE", "POD");
    for (size_t i = 0; i < l.n; i++) {
        const struct rss_cri_sandbox *s = &l.items[i];
        const char *state = s->state == RSS_CRI_SANDBOX_READY ? "READY" : "NOTREADY";
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "id", s->id);
            cJSON_AddStringToObject(o, "name", s->name);
            cJSON_AddStringToObject(o, "namespace", s->namespace);
            cJSON_AddStringToObject(o, "uid", s->uid);
            cJSON_AddNumberToObject(o, "attempt", s->attempt);
            cJSON_AddStringToObject(o, "state", state);
            cJSON_AddItemToObject(o, "labels", map_json(&s->labels));
            cJSON_AddItemToObject(o, "annotations", map_json(&s->annotations));
            print_json(o);
            continue;
        }
        printf("%-13.13s %-8u %-9s %s/%s\n", s->id, s->attempt, state, s->namespace, s->name);
    }
    rss_cri_sandbox_list_clear(&l);
    return 0;
}

/* Prints the id of the running container NAME of pod NS/POD (the newest, if several). */
static int cmd_find(struct rss_cri *cri, const char *ns, const char *pod, const char *name, rss_error_t *err)
{
    struct rss_cri_kv sel[] = {
        {"io.kubernetes.pod.namespace", ns},
        {"io.kubernetes.pod.name", pod},
        {"io.kubernetes.container.name", name},
    };
    struct rss_cri_container_filter f = {
        .match_state = true,
        .state = RSS_CRI_CONTAINER_RUNNING,
        .labels = {3, sel},
    };
    struct rss_cri_container_list l = {0};
    if (rss_cri_list_containers(cri, &f, &l, err) < 0)
        return -1;
    const struct rss_cri_container *best = NULL;
    for (size_t i = 0; i < l.n; i++)
        if (!best || l.items[i].created_at > best->created_at)
            best = &l.items[i];
    int r = 0;
    if (best)
        puts(best->id);
    else
        r = rss_error_make(err, RSS_E_NOT_FOUND, 0, "no running container %s in pod %s/%s", name, ns, pod);
    rss_cri_container_list_clear(&l);
    return r;
}

static int cmd_exec(struct rss_cri *cri, int timeout_s, const char *id, char **argv, int *exit_code,
                    rss_error_t *err)
{
    struct rss_cri_exec_result r = {0};
    if (rss_cri_exec_sync(cri, id, (const char *const *)argv, timeout_s, &r, err) < 0)
        return -1;
    fwrite(r.out, 1, r.out_len, stdout);
    fwrite(r.errout, 1, r.errout_len, stderr);
    *exit_code = r.exit_code;
    rss_cri_exec_result_clear(&r);
    return 0;
}

static int cmd_inspect(struct rss_cri *cri, const char *id, rss_error_t *err)
{
    struct rss_cri_container c = {0};
    if (rss_cri_container_status(cri, id, &c, err) < 0)
        return -1;
    print_json(container_json(&c));
    rss_cri_container_clear(&c);
    return 0;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: world-cri --endpoint unix://SOCK ps [--json] | pods [--json] | find NS POD CONTAINER\n"
            "                 | exec [--timeout S] ID CMD [ARG...] | inspect ID\n");
    return 2;
}

int main(int argc, char **argv)
{
    rss_log_set_component("world-cri");
    const char *endpoint = NULL;
    int i = 1;
    if (i + 1 < argc && !strcmp(argv[i], "--endpoint")) {
        endpoint = argv[i + 1];
        i += 2;
    }
    if (i >= argc)
        return usage();
    const char *cmd = argv[i++];
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri *cri = NULL;
    if (rss_cri_new(endpoint, NULL, &cri, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "world-cri");
        return 1;
    }
    int r, exit_code = 0;
    bool json = i < argc && !strcmp(argv[i], "--json");
    if (!strcmp(cmd, "ps")) {
        r = cmd_ps(cri, json, &err);
    } else if (!strcmp(cmd, "pods")) {
        r = cmd_pods(cri, json, &err);
    } else if (!strcmp(cmd, "find") && argc - i == 3) {
        r = cmd_find(cri, argv[i], argv[i + 1], argv[i + 2], &err);
    } else if (!strcmp(cmd, "inspect") && argc - i == 1) {
        r = cmd_inspect(cri, argv[i], &err);
    } else if (!strcmp(cmd, "exec")) {
        int timeout = 30;
        if (i + 1 < argc && !strcmp(argv[i], "--timeout")) {
            timeout = atoi(argv[i + 1]);
            i += 2;
        }
        if (argc - i < 2) {
            rss_cri_free(cri);
            return usage();
        }
        r = cmd_exec(cri, timeout, argv[i], argv + i + 1, &exit_code, &err);
    } else {
        rss_cri_free(cri);
        return usage();
    }
    rss_cri_free(cri);
    if (r < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "world-cri %s", cmd);
        return 1;
    }
    return exit_code;
}
