/* Which slow steps the flight recorder dumps (flight_policy.c): a policy a
 * production job can leave on. A dump's own cost never triggers the next
 * (a step that overlaps a dump being read or written is not judged);
 * a threshold is a ratio to the running median, a floor, or both; the
 * budget of slow-step dumps keeps the slowest (a slower step replaces the
 * least slow dump once it is spent); and each slow step not dumped says
 * why. Signal dumps are spaced and counted the same way. The caller
 * (flight.c) holds its lock around each call. */
#ifndef OPPROF_LIVE_FLIGHT_POLICY_H
#define OPPROF_LIVE_FLIGHT_POLICY_H

#include <stddef.h>
#include <stdint.h>

#define OP_POLICY_WINDOW 64 /* steps in the running median */
#define OP_POLICY_MAX_KEPT 1024

typedef struct op_kept_dump {
    int64_t dur;      /* the step's duration */
    char what[64];    /* "step 150" */
    char *file;       /* the dump's path (malloc'd), NULL while the first is written */
    int64_t next_dur; /* the step whose dump is being written to this place */
    char next_what[64];
} op_kept_dump;

typedef struct op_flight_policy {
    int64_t floor_ns; /* a slow step is longer than this (0: no floor) */
    double ratio;     /* and than this times the median (0: no ratio) */
    unsigned budget;  /* slow-step dumps kept at most, and signal dumps at most */
    int64_t window[OP_POLICY_WINDOW];
    unsigned nwin, win_at;
    int busy;              /* a dump is asked for or being written */
    int64_t busy_until;    /* when the last one ended (monotonic ns) */
    int64_t last_cost;     /* how long it took */
    op_kept_dump *kept;    /* the slow-step dumps kept, budget of them */
    unsigned nkept;
    unsigned signal_dumps; /* written for a signal so far */
    unsigned long unjudged; /* steps that ran beside a dump */
    int64_t ov[OP_POLICY_WINDOW]; /* their durations, this dump's */
    unsigned nov;
    double ov_factor;      /* how much slower they ran than the steps before (0: too few to tell) */
    int64_t cand_dur;      /* the slowest of them by the plain threshold */
    char cand_what[64];
} op_flight_policy;

enum {
    OP_STEP_OK,        /* not slow */
    OP_STEP_DUMP,      /* slow: dump it (a free place in the budget) */
    OP_STEP_REPLACE,   /* slow, slower than the least slow kept: dump it in that one's place */
    OP_STEP_UNJUDGED,  /* ran beside a dump: judged when it ends, or not slow without its cost (note) */
    OP_STEP_NOT_KEPT   /* slow, not slower than any kept dump (note says so) */
};

/* 0, or -1 out of memory. */
int op_policy_init(op_flight_policy *p, int64_t floor_ns, double ratio, unsigned budget);
void op_policy_free(op_flight_policy *p);

/* A step of duration dur ended at end_ns (monotonic): the verdict. why
 * gets "step 150 took 210.000 ms > 1.5x the median 12.000 ms" when slow,
 * note the reason a slow step is not dumped; *slot the budget's place the
 * dump goes to (DUMP, REPLACE). A verdict of DUMP or REPLACE marks the
 * recorder busy. */
int op_policy_step(op_flight_policy *p, int64_t end_ns, int64_t dur, const char *what, char *why, size_t why_cap,
                   char *note, size_t note_cap, unsigned *slot);

/* The slow-step dump for *slot was written to file (NULL: it failed).
 * *old gets the file it replaces (to unlink and name; the caller frees
 * it), NULL when none. */
void op_policy_written(op_flight_policy *p, unsigned slot, const char *file, char **old, int64_t *old_dur,
                       char *old_what, size_t cap);

/* A dump starts; every dump asked for is written (at now, monotonic,
 * having taken cost): the slowest step that ran beside them is judged
 * then, with the dump's share of its time taken out (how much slower the
 * steps beside the dump ran than those before), and the verdict is
 * op_policy_step's. */
void op_policy_busy(op_flight_policy *p);
int op_policy_idle(op_flight_policy *p, int64_t now, int64_t cost, char *why, size_t why_cap, char *note,
                   size_t note_cap, unsigned *slot);

/* A signal asks for a dump at now: 0 dump now; > 0 wait until that time
 * (the gap after the last dump: at least a second, and as long as the
 * dump took, so signals never keep the writer busy); -1 the budget is
 * spent (note says so). */
int64_t op_policy_signal(op_flight_policy *p, int64_t now, char *note, size_t note_cap);

#endif
