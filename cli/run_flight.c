/* opprof run --flight: the model's steps under the flight recorder, each an
 * opprof_step, so that a step slower than --slow-step is dumped; and
 * --inject-delay STEP:MS, which makes one step slow on purpose. */
#include "run_flight.h"

#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int run_flight_parse(const char *flight, const char *slow, const char *range, const char *file, const char *inject,
                     run_flight *out)
{
    memset(out, 0, sizeof *out);
    out->delay_step = -1;
    if (flight && cli_flight_size("run", flight, &out->ring) != 0) return -1;
    out->range = range;
    if ((slow || file || range) && !flight) {
        fprintf(stderr, "opprof run: --slow-step, --slow and --flight-file go with --flight SIZE\n");
        return -1;
    }
    if (slow && opprof_parse_slow_step(slow, &out->slow_ns, &out->slow_ratio) != OPPROF_OK) {
        fprintf(stderr, "opprof run: --slow-step %s: %s\n", slow, opprof_last_error());
        return -1;
    }
    if (inject) {
        char *end;
        long step = strtol(inject, &end, 10), ms = -1;
        if (end != inject && *end == ':') ms = strtol(end + 1, &end, 10);
        if (*end || step < 0 || ms < 0 || ms > 3600000) {
            fprintf(stderr, "opprof run: --inject-delay %s: STEP:MS, e.g. 500:100 (step from 0, up to an hour)\n",
                    inject);
            return -1;
        }
        out->delay_step = step;
        out->delay_ms = ms;
    }
    return 0;
}

static void on_dump(const char *path, const char *reason, void *user)
{
    (void)user;
    fprintf(stderr, "opprof run: flight recorder: %s: wrote %s\n", reason, path);
}

int run_flight_start(const run_flight *f, const opprof_config *cfg, const char *file, const char *dir)
{
    opprof_flight_config fc;
    opprof_flight_config_init(&fc);
    fc.session = *cfg;
    if (dir) fc.session.output_dir = dir; /* --trace-dir: the dumps go there */
    fc.ring_bytes = f->ring;
    fc.slow_step_ns = f->slow_ns;
    fc.slow_step_ratio = f->slow_ratio;
    fc.path = file;
    fc.slow_range = f->range;
    fc.on_dump = on_dump;
    return opprof_flight_start(&fc);
}

void run_flight_delay(const run_flight *f, long step)
{
    if (step != f->delay_step) return;
    struct timespec ts = {f->delay_ms / 1000, (f->delay_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int run_flight_stop(void)
{
    int rc = opprof_flight_stop();
    fprintf(stderr, "opprof run: flight recorder: %llu dump%s\n", (unsigned long long)opprof_flight_dumps(),
            opprof_flight_dumps() == 1 ? "" : "s");
    return rc;
}
