/* Every trace of tests/import/malformed is refused with OPPROF_E_PARSE and a
 * one-line "PATH: byte OFFSET: what" naming the expected offset, the same
 * from a file, from memory, and read one byte at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "import/import.h"
#include "slurp.h"
#include "opprof_trace.h"

/* The message after "LABEL: ", checked to be one line. */
static const char *after_label(const char *msg, const char *label)
{
    size_t n = strlen(label);
    if (strncmp(msg, label, n) != 0 || strncmp(msg + n, ": ", 2) != 0) fail_msg("'%s' does not start with %s", msg, label);
    if (strchr(msg, '\n')) fail_msg("'%s' is not one line", msg);
    return msg + n + 2;
}

static void check_case(const char *dir, const char *file, const char *off, const char *want)
{
    char path[1024], prefix[64], from_file[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    opprof_trace *t = (opprof_trace *)1;
    int rc = opprof_trace_load(path, &t);
    if (rc != OPPROF_E_PARSE) fail_msg("%s: status %d (%s)", file, rc, opprof_last_error());
    assert_null(t);
    snprintf(from_file, sizeof from_file, "%s", after_label(opprof_last_error(), path));
    if (strcmp(off, "-") != 0) {
        snprintf(prefix, sizeof prefix, "byte %s: ", off);
        if (strncmp(from_file, prefix, strlen(prefix)) != 0) fail_msg("%s: '%s', expected %s", file, from_file, prefix);
    } else if (strncmp(from_file, "byte ", 5) != 0) {
        fail_msg("%s: '%s' has no byte offset", file, from_file);
    }
    if (!strstr(from_file, want)) fail_msg("%s: '%s' does not say '%s'", file, from_file, want);

    size_t len = 0;
    char *doc = slurp_len(path, &len);
    assert_non_null(doc);
    assert_int_equal(opprof_trace_load_buffer(doc, len, &t), OPPROF_E_PARSE);
    assert_string_equal(after_label(opprof_last_error(), "<buffer>"), from_file);
    static const size_t reads[] = {1, 3};
    for (size_t r = 0; r < 2; r++) {
        op_source *src;
        assert_int_equal(op_source_open_memory(doc, len, reads[r], &src), 0);
        assert_int_equal(op_import_source(src, "<cut>", 16, &t), OPPROF_E_PARSE);
        assert_null(t);
        if (strcmp(after_label(opprof_last_error(), "<cut>"), from_file) != 0)
            fail_msg("%s read %zu at a time: '%s', whole: '%s'", file, reads[r], opprof_last_error(), from_file);
    }
    free(doc);
}

static void test_malformed_corpus(void **state)
{
    (void)state;
    const char *src = getenv("OPPROF_SOURCE_DIR");
    char dir[512], list[600], line[1024];
    snprintf(dir, sizeof dir, "%s/tests/import/malformed", src ? src : ".");
    snprintf(list, sizeof list, "%s/expected.txt", dir);
    FILE *f = fopen(list, "r");
    if (!f) fail_msg("cannot open %s", list);
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\n")] = '\0';
        char *file = strtok(line, "\t"), *off = strtok(NULL, "\t"), *want = strtok(NULL, "\t");
        assert_non_null(want);
        check_case(dir, file, off, want);
        n++;
    }
    fclose(f);
    assert_true(n >= 50);
}

static void test_every_prefix_of_a_trace(void **state)
{
    (void)state;
    /* Cut a real trace at every byte: each prefix is an error naming a byte
     * within it (or, for the whole text, a success), never a crash. */
    const char *doc = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, "
                      "\"tid\": 1, \"ts\": 10.5, \"dur\": 5, \"args\": {\"Input Dims\": [[2, 3], []], "
                      "\"External id\": 3}}, {\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, "
                      "\"ts\": 12, \"args\": {\"Bytes\": 64, \"Addr\": 99}}], \"baseTimeNanoseconds\": 5}";
    size_t len = strlen(doc);
    for (size_t cut = 0; cut <= len; cut++) {
        opprof_trace *t;
        int rc = opprof_trace_load_buffer(doc, cut, &t);
        if (cut == len) {
            assert_int_equal(rc, 0);
            assert_int_equal(opprof_trace_event_count(t), 1);
            opprof_trace_free(t);
            continue;
        }
        assert_int_equal(rc, OPPROF_E_PARSE);
        unsigned long long off;
        assert_int_equal(sscanf(opprof_last_error(), "<buffer>: byte %llu:", &off), 1);
        assert_true(off <= cut);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_corpus),
        cmocka_unit_test(test_every_prefix_of_a_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
