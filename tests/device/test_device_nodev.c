/* Asking for CUDA activity where there is no GPU (or no CUDA at all): one
 * clear line on stderr, and CPU profiling goes on as if CPU alone had been
 * asked for. Skipped on a machine with a CUDA device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "opprof_trace.h"

OPPROF_SITE(site_a, "aten::a");
OPPROF_SITE(site_b, "aten::b");

static opprof_trace *session(void)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    cfg.activities = OPPROF_ACTIVITY_CPU | OPPROF_ACTIVITY_CUDA;
    assert_int_equal(opprof_start(&cfg), OPPROF_OK);
    opprof_begin(&site_a);
    opprof_begin(&site_b);
    opprof_end(&site_b);
    opprof_end(&site_a);
    opprof_trace *t = NULL;
    assert_int_equal(opprof_stop(&t), OPPROF_OK);
    assert_non_null(t);
    return t;
}

static void test_no_device_prints_one_line_and_cpu_goes_on(void **state)
{
    (void)state;
    FILE *cap = tmpfile();
    assert_non_null(cap);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(cap), STDERR_FILENO) >= 0);
    opprof_trace *t1 = session();
    opprof_trace *t2 = session(); /* told once per process */
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);

    char text[1024] = {0};
    rewind(cap);
    size_t n = fread(text, 1, sizeof text - 1, cap);
    fclose(cap);
    text[n] = '\0';
    fprintf(stderr, "captured: %s", text);
    assert_true(strncmp(text, "opprof: no CUDA device: ", 24) == 0);
    char *nl = strchr(text, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], '\0'); /* exactly one line */

    opprof_trace *ts[2] = {t1, t2};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(opprof_trace_event_count(ts[k]), 2);
        opprof_event a, b;
        assert_int_equal(opprof_trace_event(ts[k], 0, &a), 0);
        assert_int_equal(opprof_trace_event(ts[k], 1, &b), 0);
        assert_string_equal(a.name, "aten::a");
        assert_string_equal(b.name, "aten::b");
        assert_int_equal(b.parent, 0);
        assert_int_equal(a.device_time_ns, 0);
        assert_int_equal(opprof_trace_dropped(ts[k]), 0);
        opprof_trace_free(ts[k]);
    }
    /* The reason is also there for programs to read. */
    int rc = opprof_cuda_device_count();
    assert_true(rc == OPPROF_E_NODEV || rc == OPPROF_E_UNSUPPORTED);
    assert_true(strncmp(opprof_last_error(), "no CUDA device: ", 16) == 0 ||
                strncmp(opprof_last_error(), "CUDA activity unavailable: ", 27) == 0);
}

int main(void)
{
    if (opprof_cuda_device_count() > 0) {
        printf("test_device_nodev: skipped, this machine has a CUDA device\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_device_prints_one_line_and_cpu_goes_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
