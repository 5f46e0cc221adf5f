/* Output paths checked before anything runs (a typo must not cost a whole
 * run, and a file opprof would refuse to write must be refused first), and
 * made absolute (a program may change folder before it exits). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"

char *cli_absolute(const char *command, const char *opt, const char *path)
{
    char cwd[PATH_MAX], *abs = NULL;
    if (path[0] == '/') {
        abs = strdup(path);
    } else if (!getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "opprof %s: %s %s: cannot tell the current folder: %s\n", command, opt, path, strerror(errno));
        return NULL;
    } else if ((abs = malloc(strlen(cwd) + strlen(path) + 2))) {
        sprintf(abs, "%s/%s", cwd, path);
    }
    if (!abs) fprintf(stderr, "opprof %s: out of memory\n", command);
    return abs;
}

char *cli_check_output(const char *command, const char *opt, const char *path, int allow_dash)
{
    if (allow_dash && !strcmp(path, "-")) return strdup(path);
    if (!*path) {
        fprintf(stderr, "opprof %s: %s: an empty file name\n", command, opt);
        return NULL;
    }
    char *abs = cli_absolute(command, opt, path);
    if (!abs) return NULL;
    char *slash = strrchr(abs, '/');
    const char *base = slash + 1;
    struct stat st;
    char why[160] = "";
    if (!*base || (stat(abs, &st) == 0 && S_ISDIR(st.st_mode)))
        snprintf(why, sizeof why, "names a folder; give a file name");
    else if (strlen(base) > NAME_MAX)
        snprintf(why, sizeof why, "the file name is longer than 255 bytes");
    else if (lstat(abs, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid())
        /* the writers refuse it (export/afile.c); say so before the run */
        snprintf(why, sizeof why, "a symbolic link owned by another user (uid %u), which opprof does not follow; "
                 "name its target or remove it", (unsigned)st.st_uid);
    if (*why) {
        fprintf(stderr, "opprof %s: %s %s: %s\n", command, opt, path, why);
        free(abs);
        return NULL;
    }
    *slash = '\0';
    const char *dir = slash == abs ? "/" : abs;
    int rc = stat(dir, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : access(dir, W_OK | X_OK) != 0 ? errno : 0;
    if (rc)
        fprintf(stderr, "opprof %s: %s %s: cannot write in the folder %s: %s\n", command, opt, path, dir, strerror(rc));
    *slash = '/';
    if (rc) {
        free(abs);
        return NULL;
    }
    return abs;
}
