/* util.c -- small filesystem and clock helpers of the kubelet simulator. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kubelet.h"
#include "rss/cleanup.h"

int64_t kl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int kl_mkdir_p(const char *path, rss_error_t *err)
{
    _cleanup_free_ char *p = rss_xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
            return rss_error_errno(err, errno, "mkdir %s", p);
        *s = '/';
    }
    if (mkdir(p, 0755) < 0 && errno != EEXIST)
        return rss_error_errno(err, errno, "mkdir %s", p);
    return 0;
}

/* Removes a tree without following symlinks or crossing into mounts' contents beyond what unlink
 * allows; errors are ignored (best effort cleanup of the kubelet's own directories). */
int kl_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -1;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                _cleanup_free_ char *sub = rss_xasprintf("%s/%s", path, e->d_name);
                kl_rm_rf(sub);
            }
            closedir(d);
        }
        return rmdir(path);
    }
    return unlink(path);
}
