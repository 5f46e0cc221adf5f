/* A plain instrumented program (opprof.h only), linked with libopprof
 * alone: it records steps 0-3 under wait=1, active=1, is handed a trace
 * when step 2 begins and one at the stop (step 3's), and frees them. Prints "READY GOT", the callback's
 * count and whether opprof_stop handed a trace. */
#include <stdio.h>

#include "opprof.h"

OPPROF_SITE(k_op, "op");

static int g_ready;

static void on_ready(const opprof_trace *t, void *user)
{
    (void)user;
    if (t) g_ready++;
}

int main(void)
{
    opprof_config c;
    opprof_config_init(&c);
    c.schedule = (opprof_schedule){.enabled = 1, .wait = 1, .active = 1};
    c.on_trace_ready = on_ready;
    if (opprof_start(&c) != OPPROF_OK) return 1;
    for (int i = 0; i < 3; i++) {
        opprof_begin(&k_op);
        opprof_end(&k_op);
        if (opprof_step() != OPPROF_OK) return 1;
    }
    opprof_begin(&k_op);
    opprof_end(&k_op);
    opprof_trace *t = NULL;
    if (opprof_stop(&t) != OPPROF_OK) return 1;
    printf("%d %d\n", g_ready, t != NULL);
    opprof_trace_free(t);
    return 0;
}
