/* opprof exec on exec_target, a program of several files built with
 * -finstrument-functions that knows nothing of opprof (see target.h): the
 * table's call counts are exactly what the program does, names are resolved
 * symbols, an excluded function is absent, the program's exit status,
 * stdout and stderr come through unchanged, and a fork and an exec inside
 * it keep working. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"
#include "slurp.h"
#include "tmpdir.h"

static char g_dir[] = "/tmp/opprof_exec_XXXXXX";

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* Runs argv with stdout and stderr into files of the temporary folder;
 * returns the exit status. */
static int run(char *const *argv, const char *out_name, const char *err_name)
{
    char out[512], err[512];
    path_in(out, sizeof out, out_name);
    path_in(err, sizeof err, err_name);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(99);
        execv(argv[0], argv);
        _exit(98);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

typedef struct row {
    char name[128];
    long count;
    char where[512]; /* the first Source Location frame, "" without */
} row;

/* The table's rows: a row line has the name, then a percentage. */
static int parse_table(const char *text, row *rows, int max)
{
    int n = 0;
    char *copy = strdup(text);
    for (char *line = strtok(copy, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        char *tok[16];
        int nt = 0;
        char *save;
        char *dup = strdup(line);
        for (char *t = strtok_r(dup, " ", &save); t && nt < 16; t = strtok_r(NULL, " ", &save)) tok[nt++] = t;
        if (nt >= 7 && tok[1][strlen(tok[1]) - 1] == '%') {
            snprintf(rows[n].name, sizeof rows[n].name, "%s", tok[0]);
            rows[n].count = atol(tok[6]);
            rows[n].where[0] = '\0';
            if (nt >= 9) snprintf(rows[n].where, sizeof rows[n].where, "%s %s", tok[7], tok[8]);
            n++;
        }
        free(dup);
    }
    free(copy);
    return n;
}

static long count_of(const row *rows, int n, const char *name)
{
    long c = -1;
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i].name, name) != 0) continue;
        assert_true(c == -1); /* one row per name when not split by stack */
        c = rows[i].count;
    }
    return c;
}

static const char *bin(const char *var)
{
    const char *v = getenv(var);
    if (!v) fail_msg("%s is not set (run under ctest)", var);
    return v;
}

static const char k_stdout[] = "start\nforked child ran\nexec child ran\nfib(12) = 144\nsums 69975000 69975000\n";
static const char k_stderr[] = "warning: this goes to stderr\n";

static void test_counts_names_exclusion_and_passthrough(void **state)
{
    (void)state;
    char table[512], stacks[512];
    path_in(table, sizeof table, "table.txt");
    path_in(stacks, sizeof stacks, "stacks.folded");
    char *argv[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", table, "--row-limit", "-1", "--stacks", stacks,
                    "--exclude", "tiny_*", "--", (char *)bin("EXEC_TARGET"), NULL};
    assert_int_equal(run(argv, "out1", "err1"), 3);
    char p[512];
    path_in(p, sizeof p, "out1");
    char *out = slurp(p);
    path_in(p, sizeof p, "err1");
    char *err = slurp(p);
    assert_string_equal(out, k_stdout);
    assert_string_equal(err, k_stderr);

    char *text = slurp(table);
    assert_non_null(text);
    row rows[64];
    int n = parse_table(text, rows, 64);
    assert_true(n >= 5);
    assert_int_equal(count_of(rows, n, "main"), 1);
    assert_int_equal(count_of(rows, n, "fib"), 465);
    assert_int_equal(count_of(rows, n, "thread_main"), 2);
    assert_int_equal(count_of(rows, n, "worker"), 10);
    assert_int_equal(count_of(rows, n, "wait_child"), 2);
    assert_int_equal(count_of(rows, n, "tiny_step"), -1);  /* excluded */
    assert_int_equal(count_of(rows, n, "child_work"), -1); /* only in the forked child */
    for (int i = 0; i < n; i++) {
        assert_null(strstr(rows[i].name, "0x"));
        assert_null(strstr(rows[i].name, "??"));
    }

    /* The folded stacks of the function call tree. */
    char *folded = slurp(stacks);
    assert_non_null(folded);
    assert_non_null(strstr(folded, "thread_main;worker "));
    assert_null(strstr(folded, "tiny_step"));
    for (const char *l = folded; *l; l = strchr(l, '\n') + 1) {
        const char *nl = strchr(l, '\n');
        assert_non_null(nl);
        const char *sp = nl;
        while (sp > l && sp[-1] != ' ') sp--;
        assert_true(sp > l && sp < nl && atol(sp) > 0);
    }
    free(folded);
    free(text);
    free(out);
    free(err);
}

/* With stacks captured at each function: the rows split by call site, one
 * frame each, and the Source Location names the caller's file and line. */
static void split_by_call_site(int with_stack)
{
    char table[512];
    path_in(table, sizeof table, "table2.txt");
    char *argv[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", table, "--row-limit", "-1", "--group-by-stack", "1",
                    with_stack ? "--with-stack" : "--", (char *)bin("EXEC_TARGET"), NULL};
    assert_int_equal(run(argv, "out2", "err2"), 3);
    char *text = slurp(table);
    assert_non_null(text);
    assert_non_null(strstr(text, "Source Location"));
    row rows[64];
    int n = parse_table(text, rows, 64);
    long fib_main = 0, fib_self[2] = {0, 0};
    int nself = 0;
    long tiny = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(rows[i].name, "tiny_step")) tiny += rows[i].count;
        if (strcmp(rows[i].name, "fib") != 0) continue;
        if (strstr(rows[i].where, "target_main.c(") && strstr(rows[i].where, ": main")) {
            fib_main += rows[i].count;
        } else {
            assert_non_null(strstr(rows[i].where, "target_math.c("));
            assert_non_null(strstr(rows[i].where, ": fib"));
            assert_true(nself < 2);
            fib_self[nself++] = rows[i].count;
        }
    }
    assert_int_equal(fib_main, 1);
    assert_int_equal(nself, 2);
    assert_int_equal(fib_self[0], 232);
    assert_int_equal(fib_self[1], 232);
    assert_int_equal(tiny, 20000); /* not excluded this time */
    free(text);
}

/* --group-by-stack splits by call site, --with-stack or not: it implies
 * it, as its help says (without, it used to give one row per name). */
static void test_with_stack_splits_by_call_site(void **state)
{
    (void)state;
    for (int with = 0; with < 2; with++)
        split_by_call_site(with);
}

/* Past the cap: a note on stderr with the drops, the names with the most
 * calls and the --exclude that leaves them out; given back to exec, that
 * option brings the run under the same cap. */
/* Events of each name in a trace file, as "name=N;" in the order first seen. */
static void events_by_name(const char *path, char *out, size_t cap)
{
    opprof_trace *t = NULL;
    assert_int_equal(opprof_trace_load(path, &t), OPPROF_OK);
    const char *names[64];
    size_t counts[64], n = 0;
    for (size_t i = 0; i < opprof_trace_event_count(t); i++) {
        opprof_event e;
        assert_int_equal(opprof_trace_event(t, i, &e), OPPROF_OK);
        size_t k = 0;
        while (k < n && strcmp(names[k], e.name)) k++;
        if (k == n) {
            assert_true(n < 64);
            names[n] = e.name;
            counts[n++] = 0;
        }
        counts[k]++;
    }
    size_t len = 0;
    out[0] = '\0';
    for (size_t k = 0; k < n; k++) len += (size_t)snprintf(out + len, cap - len, "%s=%zu;", names[k], counts[k]);
    opprof_trace_free(t);
}

/* --trace streamed (no cap given) and kept to the end (a cap given): the
 * same program output, the same table counts, the same events by name. */
static void test_streamed_trace_equals_kept_trace(void **state)
{
    (void)state;
    char ts[512], tk[512], s[512], k[512];
    path_in(ts, sizeof ts, "table_streamed.txt");
    path_in(tk, sizeof tk, "table_kept.txt");
    path_in(s, sizeof s, "streamed.json.gz");
    path_in(k, sizeof k, "kept.json");
    char *streamed[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", ts, "--row-limit", "-1", "--trace", s,
                        "--", (char *)bin("EXEC_TARGET"), NULL};
    char *kept[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", tk, "--row-limit", "-1", "--trace", k,
                    "--max-events", "1000000", "--", (char *)bin("EXEC_TARGET"), NULL};
    assert_int_equal(run(streamed, "out_s", "err_s"), 3);
    assert_int_equal(run(kept, "out_k", "err_k"), 3);
    const char *outs[] = {"out_s", "err_s"}, *want[] = {k_stdout, k_stderr};
    for (int i = 0; i < 2; i++) {
        char p[512];
        path_in(p, sizeof p, outs[i]);
        char *text = slurp(p);
        assert_string_equal(text, want[i]);
        free(text);
    }
    char *a = slurp(ts), *b = slurp(tk);
    assert_non_null(a);
    assert_non_null(b);
    row ra[64], rb[64];
    int na = parse_table(a, ra, 64), nb = parse_table(b, rb, 64);
    assert_true(na >= 5);
    assert_int_equal(na, nb);
    for (int i = 0; i < na; i++) assert_int_equal(count_of(ra, na, rb[i].name), rb[i].count);
    assert_int_equal(count_of(ra, na, "fib"), 465);
    free(a);
    free(b);
    char ea[4096], eb[4096];
    events_by_name(s, ea, sizeof ea);
    events_by_name(k, eb, sizeof eb);
    print_message("streamed: %s\n", ea);
    assert_non_null(strstr(ea, "fib=465;"));
    assert_non_null(strstr(ea, "tiny_step=20000;"));
    /* the same counts; their order is each file's */
    for (const char *p = eb; *p;) {
        const char *semi = strchr(p, ';');
        char one[256];
        snprintf(one, sizeof one, "%.*s", (int)(semi - p + 1), p);
        if (!strstr(ea, one)) fail_msg("%s is in the kept trace, not in the streamed one: %s", one, ea);
        p = semi + 1;
    }
    assert_int_equal(strlen(ea), strlen(eb));
}

static void test_cap_note_names_what_to_exclude(void **state)
{
    (void)state;
    char table[512], trace[512];
    path_in(table, sizeof table, "table_cap.txt");
    path_in(trace, sizeof trace, "cap.json");
    /* With a trace the events are kept, and the cap applies. */
    char *argv[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", table, "--trace", trace, "--max-events", "1000",
                    "--", (char *)bin("EXEC_TARGET"), NULL};
    assert_int_equal(run(argv, "out10", "err10"), 3);
    char p[512];
    path_in(p, sizeof p, "err10");
    char *err = slurp(p);
    assert_non_null(err);
    assert_non_null(strstr(err, "opprof exec: "));
    assert_non_null(strstr(err, "events were dropped: the event cap was reached (raise it with --max-events)"));
    assert_non_null(strstr(err, "opprof exec: the most calls: tiny_step (20000), fib (465), worker (10)"));
    const char *ex = strstr(err, "opprof exec: to leave them out: --exclude '");
    assert_non_null(ex);
    ex = strchr(ex, '\'') + 1;
    const char *q = strchr(ex, '\'');
    assert_non_null(q);
    char patterns[256];
    snprintf(patterns, sizeof patterns, "%.*s", (int)(q - ex), ex);
    assert_non_null(strstr(patterns, "tiny_step,fib,worker,"));
    char *again[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", table, "--trace", trace, "--max-events", "1000",
                     "--exclude", patterns, "--", (char *)bin("EXEC_TARGET"), NULL};
    assert_int_equal(run(again, "out11", "err11"), 3);
    path_in(p, sizeof p, "err11");
    char *err2 = slurp(p);
    assert_string_equal(err2, k_stderr);
    free(err2);
    free(err);
}

/* A table alone: the threads sum by name as they record (no events), and
 * the table's counts are those of the event path, with no cap: 1000 events
 * would be a cap for the event path, not for sums. */
static void test_table_only_sums_match_the_event_path(void **state)
{
    (void)state;
    char sums[512], events[512], trace[512];
    path_in(sums, sizeof sums, "table_sums.txt");
    path_in(events, sizeof events, "table_events.txt");
    path_in(trace, sizeof trace, "events.json");
    char *a[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", sums, "--row-limit", "-1", "--max-events", "1000",
                 "--sort-by", "count", "--", (char *)bin("EXEC_TARGET"), NULL};
    assert_int_equal(run(a, "out12", "err12"), 3);
    char *b[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", events, "--trace", trace, "--row-limit", "-1",
                 "--sort-by", "count", "--", (char *)bin("EXEC_TARGET"), NULL};
    assert_int_equal(run(b, "out13", "err13"), 3);
    char p[512];
    path_in(p, sizeof p, "err12");
    char *err = slurp(p);
    assert_string_equal(err, k_stderr); /* nothing dropped, nothing said */
    free(err);
    char *ta = slurp(sums), *tb = slurp(events);
    assert_non_null(ta);
    assert_non_null(tb);
    assert_null(strstr(ta, "Dropped"));
    row ra[64], rb[64];
    int na = parse_table(ta, ra, 64), nb = parse_table(tb, rb, 64);
    assert_int_equal(na, nb);
    assert_true(na >= 6);
    for (int i = 0; i < na; i++) {
        assert_string_equal(ra[i].name, rb[i].name); /* sorted by count: the same order */
        assert_int_equal(ra[i].count, rb[i].count);
    }
    assert_int_equal(count_of(ra, na, "tiny_step"), 20000);
    assert_int_equal(count_of(ra, na, "fib"), 465);
    free(ta);
    free(tb);
}

/* --trace FILE.pftrace: zstd-compressed batches by default, zlib's with
 * OPPROF_PFTRACE_COMPRESS=zlib, plain packets with OPPROF_PFTRACE_COMPRESS=0
 * (read at load: the preload library removes the OPPROF_* variables before
 * the program runs); all read back with every call. */
static void test_pftrace_compressed_or_plain(void **state)
{
    (void)state;
    for (int how = 0; how < 3; how++) { /* zstd, plain, zlib */
        int plain = how == 1;
        char trace[512], table[512];
        static const char *const names[] = {"batches", "plain", "zlib"};
        char fn[64];
        snprintf(fn, sizeof fn, "%s.pftrace", names[how]);
        path_in(trace, sizeof trace, fn);
        snprintf(fn, sizeof fn, "%s.txt", names[how]);
        path_in(table, sizeof table, fn);
        if (how) setenv("OPPROF_PFTRACE_COMPRESS", plain ? "0" : "zlib", 1);
        char *a[] = {(char *)bin("OPPROF_BIN"), "exec", "--trace", trace, "--", (char *)bin("EXEC_TARGET"), NULL};
        int rc = run(a, "out_pf", "err_pf");
        unsetenv("OPPROF_PFTRACE_COMPRESS");
        assert_int_equal(rc, 3);
        FILE *f = fopen(trace, "rb");
        assert_non_null(f);
        unsigned char head[16];
        assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
        fclose(f);
        /* after the first packet's tag and length: zstd_compressed_packets
         * (field 133: 0xaa 0x08) or compressed_packets (field 50: 0x92 0x03) */
        size_t i = 1;
        while (i < 10 && (head[i] & 0x80)) i++;
        int zstd = head[i + 1] == 0xaa && head[i + 2] == 0x08, zlib = head[i + 1] == 0x92 && head[i + 2] == 0x03;
        assert_int_equal(zstd, how == 0);
        assert_int_equal(zlib, how == 2);
        char *b[] = {(char *)bin("OPPROF_BIN"), "summary", trace, "--row-limit", "-1", NULL};
        snprintf(fn, sizeof fn, "%s.txt", names[how]);
        assert_int_equal(run(b, fn, "err_sum"), 0);
        char *text = slurp(table);
        assert_non_null(text);
        row r[64];
        int n = parse_table(text, r, 64);
        assert_int_equal(count_of(r, n, "tiny_step"), 20000);
        assert_int_equal(count_of(r, n, "fib"), 465);
        free(text);
    }
}

/* One vocabulary: --format csv writes every row sorted by --sort (here
 * exec's old spelling --sort-by); without options the table is sorted by
 * opprof's default, cpu_time_total: main first (its six functions are
 * fewer than the default 10 rows). */
static void test_format_sort_and_defaults(void **state)
{
    (void)state;
    char csv[512], table[512];
    path_in(csv, sizeof csv, "rows.csv");
    path_in(table, sizeof table, "default.txt");
    char *argv[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", csv, "--format", "csv", "--sort-by", "count",
                    "--", (char *)bin("EXEC_TARGET"), NULL};
    assert_int_equal(run(argv, "out6", "err6"), 3);
    char *text = slurp(csv);
    assert_non_null(text);
    assert_int_equal(strncmp(text, "name,count,", 11), 0);
    /* most calls first: tiny_step (20000) before fib (465) */
    const char *tiny = strstr(text, "\ntiny_step,"), *fib = strstr(text, "\nfib,");
    assert_true(tiny && fib && tiny < fib);
    assert_int_equal(strncmp(strchr(text, '\n') + 1, "tiny_step,", 10), 0);
    free(text);
    char *argv2[] = {(char *)bin("OPPROF_BIN"), "exec", "--table", table, "--", (char *)bin("EXEC_TARGET"), NULL};
    assert_int_equal(run(argv2, "out7", "err7"), 3);
    text = slurp(table);
    assert_non_null(text);
    row rows[64];
    int n = parse_table(text, rows, 64);
    assert_int_equal(n, 6);
    assert_string_equal(rows[0].name, "main"); /* the largest total time */
    free(text);
    char *bad[] = {(char *)bin("OPPROF_BIN"), "exec", "--format", "xml", "true", NULL};
    assert_int_equal(run(bad, "out8", "err8"), 2);
    char p[512];
    path_in(p, sizeof p, "err8");
    text = slurp(p);
    assert_non_null(strstr(text, "usage: opprof exec"));
    assert_null(strstr(text, "options:")); /* the usage line, not the whole help */
    free(text);
}

static void test_errors(void **state)
{
    (void)state;
    char *missing[] = {(char *)bin("OPPROF_BIN"), "exec", "--", "/nonexistent/program", NULL};
    assert_int_equal(run(missing, "out3", "err3"), 127);
    char p[512];
    path_in(p, sizeof p, "err3");
    char *err = slurp(p);
    assert_non_null(strstr(err, "/nonexistent/program"));
    free(err);
    char *bad[] = {(char *)bin("OPPROF_BIN"), "exec", "--row-limit", "many", "true", NULL};
    assert_int_equal(run(bad, "out4", "err4"), 2);
    char *none[] = {(char *)bin("OPPROF_BIN"), "exec", NULL};
    assert_int_equal(run(none, "out5", "err5"), 2);
}

/* Shell command in the temporary folder; returns the exit status. */
static int sh_in_dir(const char *fmt, ...)
{
    char cmd[4096], body[3500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s", g_dir, body);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Relative output names are the caller's folder's, even when the program
 * changes folder before it exits (it used to write, and overwrite, there). */
static void test_relative_outputs_stay_where_asked(void **state)
{
    (void)state;
    assert_int_equal(sh_in_dir("mkdir -p elsewhere"), 0);
    assert_int_equal(sh_in_dir("EXEC_TARGET_CHDIR=elsewhere '%s' exec --table rel_table.txt --stacks rel.folded -- "
                               "'%s' >/dev/null 2>&1",
                               bin("OPPROF_BIN"), bin("EXEC_TARGET")),
                     3);
    assert_int_equal(sh_in_dir("test -s rel_table.txt && test -s rel.folded"), 0);
    assert_int_equal(sh_in_dir("test ! -e elsewhere/rel_table.txt && test ! -e elsewhere/rel.folded"), 0);
}

/* Outputs are checked before the program runs: a typo costs no run. The
 * program here would leave a mark if it ran. */
static void test_outputs_checked_before_the_program_runs(void **state)
{
    (void)state;
    static const struct {
        const char *opts, *says;
    } cases[] = {
        {"--trace ''", "an empty file name"},
        {"--trace outdir/", "names a folder"},
        {"--trace outdir", "names a folder"},
        {"--stacks no/such/folder/x.folded", "cannot write in the folder"},
        {"--table no_such_folder/t.txt", "cannot write in the folder"},
        {"--sort bogus_key", "--sort takes one of"},
        {"--row-limit -7", "--row-limit"},
    };
    assert_int_equal(sh_in_dir("mkdir -p outdir"), 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(sh_in_dir("rm -f ran; '%s' exec %s -- sh -c 'touch ran' 2>err_check", bin("OPPROF_BIN"),
                                   cases[i].opts),
                         2);
        assert_int_equal(sh_in_dir("test ! -e ran"), 0);
        char p[512];
        path_in(p, sizeof p, "err_check");
        char *err = slurp(p);
        if (!strstr(err, cases[i].says)) fail_msg("%s: stderr %s", cases[i].opts, err);
        free(err);
    }
}

/* A static program cannot take a preload: refused, not run unprofiled. */
static void test_static_program_refused(void **state)
{
    (void)state;
    int st = sh_in_dir("'%s' exec -- '%s' 2>err_static", bin("OPPROF_BIN"), bin("EXEC_STATIC_TARGET"));
    assert_int_equal(st, 2);
    char p[512];
    path_in(p, sizeof p, "err_static");
    char *err = slurp(p);
    if (!strstr(err, "statically linked")) fail_msg("stderr: %s", err);
    free(err);
}

TMPDIR_SETUP(g_dir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_names_exclusion_and_passthrough),
        cmocka_unit_test(test_with_stack_splits_by_call_site),
        cmocka_unit_test(test_cap_note_names_what_to_exclude),
        cmocka_unit_test(test_table_only_sums_match_the_event_path),
        cmocka_unit_test(test_pftrace_compressed_or_plain),
        cmocka_unit_test(test_format_sort_and_defaults),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_relative_outputs_stay_where_asked),
        cmocka_unit_test(test_outputs_checked_before_the_program_runs),
        cmocka_unit_test(test_static_program_refused),
        cmocka_unit_test(test_streamed_trace_equals_kept_trace),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
