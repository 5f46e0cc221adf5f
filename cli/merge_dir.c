/* Finding the latest run's traces in a folder (merge_dir.h). */
#define _GNU_SOURCE
#include "merge_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"

int cli_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct run_file {
    char *name;
    size_t run_len; /* RUN is name[0, run_len) */
    long rank;
} run_file;

/* RUN_rank_R.<anything>.json or .json.gz: the run's length and the rank,
 * or 0 for a name that is not a rank's trace. */
static size_t parse_name(const char *name, long *rank)
{
    const char *r = strstr(name, "_rank_"), *end;
    if (!r || r == name) return 0;
    char *num_end;
    errno = 0;
    *rank = strtol(r + 6, &num_end, 10);
    if (num_end == r + 6 || *num_end != '.' || errno || *rank < 0) return 0;
    size_t n = strlen(name);
    end = name + n;
    int json = (n > 5 && !strcmp(end - 5, ".json")) || (n > 8 && !strcmp(end - 8, ".json.gz"));
    return json ? (size_t)(r - name) : 0;
}

/* By rank, then by name: a rank's last file last. */
static int by_rank_name(const void *a, const void *b)
{
    const run_file *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int bad_dir(const char *command, const char *dir, const char *why)
{
    fprintf(stderr, "opprof %s: %s: %s\n", command, dir, why);
    return CLI_BAD_INPUT;
}

int cli_latest_run(const char *command, const char *dir, cli_run_files *out)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d) return bad_dir(command, dir, strerror(errno));
    run_file *f = NULL;
    size_t n = 0, cap = 0;
    const char *latest = NULL; /* the largest RUN seen */
    size_t latest_len = 0;
    int rc = CLI_OK;
    for (struct dirent *e; rc == CLI_OK && (e = readdir(d)) != NULL;) {
        long rank;
        size_t run_len = parse_name(e->d_name, &rank);
        if (!run_len) continue;
        if (n == cap) {
            run_file *g = realloc(f, (cap = cap ? 2 * cap : 16) * sizeof *f);
            if (!g) { rc = CLI_FAIL; break; }
            f = g;
        }
        if (!(f[n].name = strdup(e->d_name))) { rc = CLI_FAIL; break; }
        f[n].run_len = run_len;
        f[n].rank = rank;
        n++;
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        int c = latest ? strncmp(f[i].name, latest, f[i].run_len < latest_len ? f[i].run_len : latest_len) : 1;
        if (c > 0 || (c == 0 && f[i].run_len > latest_len)) latest = f[i].name, latest_len = f[i].run_len;
    }
    if (rc == CLI_OK && !latest)
        rc = bad_dir(command, dir, "no rank's trace (RUN_rank_R.*.json, as opprof run --distributed --trace-dir "
                                   "writes) in this folder");
    size_t kept = 0, older = 0, cycles = 0;
    if (rc == CLI_OK) {
        char run[256];
        snprintf(run, sizeof run, "%.*s", (int)latest_len, latest);
        for (size_t i = 0; i < n; i++) { /* the latest run's files to the front */
            if (f[i].run_len == latest_len && !strncmp(f[i].name, run, latest_len)) {
                run_file t = f[kept];
                f[kept++] = f[i];
                f[i] = t;
            } else {
                older++;
            }
        }
        qsort(f, kept, sizeof *f, by_rank_name);
        out->path = calloc(kept + 1, sizeof *out->path);
        if (!out->path) rc = CLI_FAIL;
        for (size_t i = 0; rc == CLI_OK && i < kept; i++) {
            if (i + 1 < kept && f[i + 1].rank == f[i].rank) { /* a schedule's earlier cycle */
                cycles++;
                continue;
            }
            if (asprintf(&out->path[out->n], "%s/%s", dir, f[i].name) < 0) {
                out->path[out->n] = NULL;
                rc = CLI_FAIL;
            } else {
                out->n++;
            }
        }
        if (rc == CLI_OK)
            fprintf(stderr, "opprof %s: %s: run %s, %zu rank%s%s%zu file%s of older runs left out%s%zu earlier "
                            "cycle%s)\n",
                    command, dir, run, out->n, out->n == 1 ? "" : "s", " (", older, older == 1 ? "" : "s",
                    ", ", cycles, cycles == 1 ? "" : "s");
    }
    for (size_t i = 0; i < n; i++) free(f[i].name);
    free(f);
    if (rc != CLI_OK) cli_run_files_free(out);
    return rc;
}

void cli_run_files_free(cli_run_files *f)
{
    for (size_t i = 0; f->path && i < f->n; i++) free(f->path[i]);
    free(f->path);
    f->path = NULL;
    f->n = 0;
}
