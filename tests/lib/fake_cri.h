/* fake_cri.h -- an in-process fake CRI server (gRPC C core) for the CRI client's unit tests.
 *
 * It serves /runtime.v1.RuntimeService/{Version,ListContainers,ExecSync,StopContainer} on a unix socket from
 * one thread, one call at a time; any other method gets UNIMPLEMENTED. ExecSync behaves by cmd[0]: echo
 * ARGS...   stdout "ARGS joined by spaces\n", exit 0 fail           stderr "oops\n", exit 3 binary stdout
 * "a\0b" (3 bytes), stderr empty, exit 0 big N          stdout N bytes of 'x' crio-timeout   CRI-O's timeout
 * form: exit -1, stderr "command timed out" slow MS        answers "slow\n" after sleeping MS milliseconds
 * (blocks the server meanwhile) garbage        a response that is not a valid ExecSyncResponse status CODE
 * MESSAGE   fails with gRPC status CODE and MESSAGE and container id "missing" gets NOT_FOUND like
 * containerd's. ListContainers answers one container per label-selector entry of the request (id = key,
 * labels = the selector) plus one with state 7 and a duplicated label key, so that tests see what went out on
 * the wire. StopContainer answers OK (and is counted: fake_cri_stops) except for id "missing" (NOT_FOUND).
 */
#ifndef RSS_TEST_FAKE_CRI_H
#define RSS_TEST_FAKE_CRI_H

#include <stdbool.h>

struct fake_cri;

/* Starts a server on unix socket `path` (created; removed on stop). NULL on failure. */
struct fake_cri *fake_cri_start(const char *path);

/* A server unlike the default one, for the CRI discovery tests. */
struct fake_cri_options {
    const char *runtime_name; /* Version's runtime_name; NULL: "fake-cri" */
    bool no_cri;              /* every method UNIMPLEMENTED: a gRPC server without the CRI service */
    bool no_containers;       /* ListContainers answers an empty list */
};
struct fake_cri *fake_cri_start_with(const char *path, const struct fake_cri_options *opts);

/* Stops the server, joins its thread, removes the socket file. Accepts NULL. */
void fake_cri_stop(struct fake_cri *f);

/* Number of calls served so far. */
int fake_cri_calls(struct fake_cri *f);

/* Number of StopContainer calls answered OK. */
int fake_cri_stops(struct fake_cri *f);

/* Number of ExecSync calls (hooks run). */
int fake_cri_execs(struct fake_cri *f);

#endif
