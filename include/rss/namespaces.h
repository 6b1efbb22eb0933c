/* namespaces.h -- the namespaces rssd manages (--namespaces): parsing, membership, and LISTs over them.
 *
 * Unset (n == 0) means every namespace: rssd lists and watches cluster-wide, as it always did. Set, rssd
 * lists and watches RSS objects, pods and StatefulSets only in those namespaces (one LIST+WATCH per
 * namespace per resource), so a namespace-scoped install needs no cluster-wide read (docs/deploy.md).
 * rssd's own namespace (Leases, member records) is separate and need not be in the list.
 */
#ifndef RSS_NAMESPACES_H
#define RSS_NAMESPACES_H

#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>

#include "rss/error.h"
#include "rss/kube.h"

struct rss_namespaces {
    char **names; /* owned; in the order given */
    size_t n;     /* 0 = every namespace */
};

/* Parses "NS[,NS...]" into *out (which the caller clears with rss_namespaces_clear). Each name must
 * be a DNS label (RFC 1123: at most 63 of [a-z0-9-], starting and ending alphanumeric), none empty,
 * none twice. NULL or "" is an error too: "every namespace" is the flag left out. Errors:
 * RSS_E_INVALID with the offending name. */
int rss_namespaces_parse(const char *csv, struct rss_namespaces *out, rss_error_t *err);

/* Frees the names; *nss becomes "every namespace". Accepts NULL. */
void rss_namespaces_clear(struct rss_namespaces *nss);

/* True when ns is managed: always for "every namespace" (nss NULL or n == 0). */
bool rss_namespaces_contains(const struct rss_namespaces *nss, const char *ns);

/* LIST of `plural` in group_version over the managed namespaces: one cluster-wide LIST when every
 * namespace is managed, else one LIST per namespace, the items concatenated into one List object.
 * opts as rss_kube_list. A failed LIST fails the whole (a partial view would read as deletions). */
int rss_namespaces_list(struct rss_kube *kube, const struct rss_namespaces *nss, const char *group_version,
                        const char *plural, const struct rss_kube_list_opts *opts, cJSON **ret,
                        rss_error_t *err);

#endif
