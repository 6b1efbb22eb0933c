/* hostproc.c -- containers run as host processes (how rssd, a DaemonSet, runs in the test world).
 *
 * A process is identified by pid and start time (field 22 of /proc/PID/stat) so a recycled pid is
 * never mistaken for it. Its record, "pid start attempt" in <state_dir>/hostproc/<uid>_<name>.pid,
 * lets a restarted kubelet adopt it and lets `world power-off` kill it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kubelet.h"
#include "rss/cleanup.h"
#include "rss/log.h"

static char *record_path(struct kl *kl, const char *uid, const char *name, const char *ext)
{
    return rss_xasprintf("%s/hostproc/%s_%s.%s", kl->state_dir, uid, name, ext);
}

/* The start time of a live (non-zombie) process, or 0. */
static unsigned long long proc_start(pid_t pid)
{
    _cleanup_free_ char *path = rss_xasprintf("/proc/%d/stat", (int)pid);
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    char buf[1024];
    if (!f || !fgets(buf, sizeof(buf), f))
        return 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    char state = 0;
    unsigned long long start = 0;
    /* after "comm)": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
     * cutime cstime priority nice threads itrealvalue starttime(22) */
    if (sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
               &state, &start) != 2)
        return 0;
    return (state == 'Z' || state == 'X') ? 0 : start;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

int kl_hostproc_start(struct kl *kl, const char *uid, const char *name, const char *binary, char *const *argv,
                      const struct kl_env *env, const char *kubeconfig, uint32_t attempt,
                      struct kl_hostproc *ret, rss_error_t *err)
{
    _cleanup_free_ char *dir = rss_xasprintf("%s/hostproc", kl->state_dir);
    if (kl_mkdir_p(dir, err) < 0)
        return -1;
    _cleanup_free_ char *logf = record_path(kl, uid, name, "log");
    _cleanup_free_ char *pidf = record_path(kl, uid, name, "pid");

    /* The container's env, then the node's endpoints: they must point at this world. */
    size_t n = 0;
    static const char *const passed[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"};
    char **envp = rss_xcalloc(env->n + 5 + sizeof(passed) / sizeof(passed[0]), sizeof(char *));
    envp[n++] = rss_xstrdup("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    for (size_t i = 0; i < env->n; i++)
        envp[n++] = rss_xasprintf("%s=%s", env->keys[i], env->values[i]);
    envp[n++] = rss_xasprintf("CONTAINER_RUNTIME_ENDPOINT=%s", kl->cri_endpoint);
    envp[n++] = rss_xasprintf("KUBECONFIG=%s", kubeconfig);
    if (kl->boot_id)
        envp[n++] = rss_xasprintf("RSS_BOOT_ID=%s", kl->boot_id);
    /* A sanitizer build of rssd reports where tests/run.sh looks (a real kubelet has no such thing). */
    for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
        if (getenv(passed[i]))
            envp[n++] = rss_xasprintf("%s=%s", passed[i], getenv(passed[i]));

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, logf, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_init(&attr);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    /* Our threads block the signals main() waits for; the child must start with a clean slate, in
     * its own session so a terminal's ^C to the kubelet does not reach it. */
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid = 0;
    int r = posix_spawn(&pid, binary, &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    for (size_t i = 0; i < n; i++)
        free(envp[i]);
    free(envp);
    if (r != 0)
        return rss_error_errno(err, r, "posix_spawn %s", binary);

    *ret = (struct kl_hostproc){
        .pid = pid,
        .start = proc_start(pid),
        .attempt = attempt,
        .child = true,
        .started_at = kl_now_ns(),
    };
    _cleanup_free_ char *tmp = rss_xasprintf("%s.tmp", pidf);
    _cleanup_fclose_ FILE *f = fopen(tmp, "we");
    if (!f || fprintf(f, "%d %llu %u\n", (int)pid, ret->start, attempt) < 0 || fflush(f) != 0 ||
        rename(tmp, pidf) < 0) {
        int e = errno;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return rss_error_errno(err, e, "recording host process in %s", pidf);
    }
    return 0;
}

int kl_hostproc_adopt(struct kl *kl, const char *uid, const char *name, struct kl_hostproc *ret,
                      rss_error_t *err)
{
    _cleanup_free_ char *pidf = record_path(kl, uid, name, "pid");
    _cleanup_fclose_ FILE *f = fopen(pidf, "re");
    if (!f)
        return rss_error_make(err, RSS_E_NOT_FOUND, 0, "no host process recorded for %s/%s", uid, name);
    int pid = 0;
    unsigned long long start = 0;
    unsigned attempt = 0;
    if (fscanf(f, "%d %llu %u", &pid, &start, &attempt) != 3 || pid <= 1)
        return rss_error_make(err, RSS_E_NOT_FOUND, 0, "bad record %s", pidf);
    *ret = (struct kl_hostproc){.attempt = attempt};
    if (proc_start(pid) != start || start == 0)
        return 0;
    ret->pid = pid;
    ret->start = start;
    ret->started_at = kl_now_ns(); /* unknown; the adoption time is close enough for status */
    return 1;
}

bool kl_hostproc_alive(struct kl_hostproc *p)
{
    if (p->pid <= 0 || p->exited)
        return false;
    if (p->child) {
        int st = 0;
        pid_t r = waitpid(p->pid, &st, WNOHANG);
        if (r == 0)
            return true;
        if (r == p->pid) {
            p->exited = true;
            p->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            p->finished_at = kl_now_ns();
            return false;
        }
    }
    if (proc_start(p->pid) == p->start)
        return true;
    p->exited = true;
    p->exit_code = 255; /* not our child: the exit status is unknowable */
    p->finished_at = kl_now_ns();
    return false;
}

void kl_hostproc_kill(struct kl *kl, const char *uid, const char *name, struct kl_hostproc *p, long grace_s)
{
    if (kl_hostproc_alive(p)) {
        kill(p->pid, SIGTERM);
        for (long i = 0; i < grace_s * 10 && kl_hostproc_alive(p); i++)
            sleep_ms(100);
        if (kl_hostproc_alive(p)) {
            kill(p->pid, SIGKILL);
            for (int i = 0; i < 100 && kl_hostproc_alive(p); i++)
                sleep_ms(20);
        }
    }
    _cleanup_free_ char *pidf = record_path(kl, uid, name, "pid");
    unlink(pidf);
}

void kl_hostproc_reap_orphans(struct kl *kl, bool (*keep)(struct kl *kl, const char *uid))
{
    _cleanup_free_ char *dir = rss_xasprintf("%s/hostproc", kl->state_dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        const char *us = strchr(e->d_name, '_');
        if (len < 5 || strcmp(e->d_name + len - 4, ".pid") || !us)
            continue;
        _cleanup_free_ char *uid = strndup(e->d_name, (size_t)(us - e->d_name));
        if (!uid || keep(kl, uid))
            continue;
        _cleanup_free_ char *path = rss_xasprintf("%s/%s", dir, e->d_name);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        int pid = 0;
        unsigned long long start = 0;
        if (f && fscanf(f, "%d %llu", &pid, &start) == 2 && pid > 1 && start && proc_start(pid) == start) {
            rss_log_info("killing host process %d of vanished pod %s", pid, uid);
            kill(pid, SIGKILL);
        }
        unlink(path);
    }
    closedir(d);
}
