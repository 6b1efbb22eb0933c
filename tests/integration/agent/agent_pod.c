/* agent_pod.c -- test helper: creates one member container the way the kubelet would, for rssd's tests.
 *
 *   agent_pod ENDPOINT POD NAMESPACE UID CONTAINER HOOKS_DIR DATA_DIR
 * creates a sandbox and a running busybox container (`sleep infinity`) with the kubelet's labels for
 * pod uid UID, HOOKS_DIR mounted read-only at /hooks, DATA_DIR at /data and POD_NAME set; prints
 * "SANDBOX_ID CONTAINER_ID".
 */
#include <stdio.h>

#include "rss/cleanup.h"
#include "rss/cri.h"
#include "cri_lifecycle.h"
#include "rss/log.h"

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: agent_pod ENDPOINT POD NAMESPACE UID CONTAINER HOOKS_DIR DATA_DIR\n");
        return 2;
    }
    const char *pod = argv[2], *ns = argv[3], *uid = argv[4], *cname = argv[5];
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri *cri = NULL;
    if (rss_cri_new(argv[1], NULL, &cri, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "agent_pod");
        return 1;
    }
    struct rss_cri_kv labels[] = {
        {"io.kubernetes.pod.name", pod}, {"io.kubernetes.pod.namespace", ns}, {"io.kubernetes.pod.uid", uid}};
    struct rss_cri_kv clabels[] = {{"io.kubernetes.pod.name", pod},
                                   {"io.kubernetes.pod.namespace", ns},
                                   {"io.kubernetes.pod.uid", uid},
                                   {"io.kubernetes.container.name", cname}};
    struct rss_cri_kv env[] = {{"POD_NAME", pod}};
    struct rss_cri_mount mounts[] = {{"/hooks", argv[6], true}, {"/data", argv[7], false}};
    struct rss_cri_sandbox_config sc = {.name = pod, .namespace = ns, .uid = uid, .labels = {3, labels}};
    static const char *const cmd[] = {"/bin/sleep", "infinity", NULL};
    struct rss_cri_container_config cc = {.name = cname,
                                          .image = "localhost/rss/busybox:1",
                                          .command = cmd,
                                          .envs = {1, env},
                                          .mounts = mounts,
                                          .n_mounts = 2,
                                          .labels = {4, clabels}};
    _cleanup_free_ char *sid = NULL;
    _cleanup_free_ char *cid = NULL;
    int rc = 0;
    if (rss_cri_run_sandbox(cri, &sc, &sid, &err) < 0 ||
        rss_cri_create_container(cri, sid, &cc, &sc, &cid, &err) < 0 ||
        rss_cri_start_container(cri, cid, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "agent_pod");
        rc = 1;
    } else {
        printf("%s %s\n", sid, cid);
    }
    rss_cri_free(cri);
    return rc;
}
