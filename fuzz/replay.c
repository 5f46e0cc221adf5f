/* Runs a libFuzzer target without libFuzzer: LLVMFuzzerTestOneInput on
 * every file named, and on every file of every folder named (in name order,
 * not recursing), the way `fuzz_target FILE...` replays a corpus. A target
 * reports a finding by aborting (or through the sanitizers it was built
 * with), so reaching the end means every input passed. No input at all is
 * an error: a corpus that went missing must not pass as an empty one.
 *
 *   fuzz_import_replay fuzz/corpus tests/import/malformed crash-123 ...   */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole of path, or NULL with the reason printed. */
static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        fprintf(stderr, "fuzz replay: %s: %s\n", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    *size = n;
    return buf;
}

static int run_file(const char *path)
{
    size_t size = 0;
    uint8_t *data = read_all(path, &size);
    if (!data) return -1;
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each regular file of dir in name order; the number run, or -1. */
static long run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    long rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) rc = -1;
            else names = grown;
        }
        if (rc == 0 && !(names[n++] = strdup(e->d_name))) rc = -1;
    }
    closedir(d);
    if (rc != 0) fprintf(stderr, "fuzz replay: %s: out of memory\n", dir);
    if (n) qsort(names, n, sizeof *names, by_name);
    long ran = 0;
    for (size_t i = 0; i < n && rc == 0 && names[i]; i++) {
        char path[4096];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path) {
            fprintf(stderr, "fuzz replay: %s/%s: path too long\n", dir, names[i]);
            rc = -1;
        } else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(path) != 0) rc = -1;
            else ran++;
        }
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc != 0 ? -1 : ran;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        long ran = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]) == 0 ? 1 : -1;
        if (ran < 0) return 1;
        if (S_ISDIR(st.st_mode)) printf("%s: %ld inputs\n", argv[i], ran);
        total += ran;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("fuzz replay: %ld inputs passed in %.0f ms\n", total, ms);
    if (total == 0) {
        fprintf(stderr, "fuzz replay: no input found: the corpus is missing\n");
        return 1;
    }
    return 0;
}
