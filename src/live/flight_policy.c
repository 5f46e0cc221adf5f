/* The flight recorder's dump policy (flight_policy.h).
 *
 * Why steps beside a dump are judged apart: on a loaded machine a dump's
 * own reading and writing (a second or more of CPU for a large ring)
 * slows the steps that run beside it; judged as the others, they would
 * trigger the next dump, whose cost would slow the next steps again, and
 * the budget would be spent on the recorder's own noise (issue 25: ten
 * dumps of steps 39-42 and 89-91, none of the slow step 150). Not judged
 * at all, a real slow step that happens to run beside a dump would be
 * lost. So they stay out of the median, and the slowest of them is judged
 * when the dump ends, its time divided by how much slower the steps beside
 * the dump ran than those before it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/flight_policy.h"

#define MIN_STEPS 8 /* steps judged before a ratio applies */
#define SIGNAL_GAP_NS 1000000000LL

int op_policy_init(op_flight_policy *p, int64_t floor_ns, double ratio, unsigned budget)
{
    memset(p, 0, sizeof *p);
    p->floor_ns = floor_ns;
    p->ratio = ratio;
    p->budget = budget > OP_POLICY_MAX_KEPT ? OP_POLICY_MAX_KEPT : budget;
    p->kept = calloc(p->budget ? p->budget : 1, sizeof *p->kept);
    return p->kept ? 0 : -1;
}

void op_policy_free(op_flight_policy *p)
{
    for (unsigned i = 0; p->kept && i < p->nkept; i++) free(p->kept[i].file);
    free(p->kept);
    p->kept = NULL;
    p->nkept = 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t median(const op_flight_policy *p)
{
    int64_t v[OP_POLICY_WINDOW];
    memcpy(v, p->window, p->nwin * sizeof *v);
    qsort(v, p->nwin, sizeof *v, cmp_i64);
    return p->nwin % 2 ? v[p->nwin / 2] : (v[p->nwin / 2 - 1] + v[p->nwin / 2]) / 2;
}

/* 1 when dur is slow, with the reason in why. */
static int is_slow(const op_flight_policy *p, int64_t dur, const char *what, char *why, size_t cap)
{
    if (!p->floor_ns && !p->ratio) return 0;
    if (p->floor_ns && dur <= p->floor_ns) return 0;
    if (!p->ratio) {
        snprintf(why, cap, "%s took %.3f ms > %.3f ms", what, (double)dur / 1e6, (double)p->floor_ns / 1e6);
        return 1;
    }
    if (p->nwin < MIN_STEPS) return 0;
    int64_t med = median(p);
    if ((double)dur <= p->ratio * (double)med) return 0;
    int n = snprintf(why, cap, "%s took %.3f ms > %gx the median %.3f ms", what, (double)dur / 1e6, p->ratio,
                     (double)med / 1e6);
    if (p->floor_ns && n > 0 && (size_t)n < cap)
        snprintf(why + n, cap - (size_t)n, " and > %.3f ms", (double)p->floor_ns / 1e6);
    return 1;
}

/* The kept dump of the shortest step, of those written. */
static unsigned least_slow(const op_flight_policy *p)
{
    unsigned m = UINT32_MAX;
    for (unsigned i = 0; i < p->nkept; i++)
        if (p->kept[i].file && (m == UINT32_MAX || p->kept[i].dur < p->kept[m].dur)) m = i;
    return m;
}

/* A slow step's place in the budget: a free one, or the least slow kept
 * dump's when the step is slower; else NOT_KEPT, said in note. */
static int take_slot(op_flight_policy *p, int64_t dur, const char *what, char *note, size_t note_cap, unsigned *slot)
{
    if (p->nkept < p->budget) {
        *slot = p->nkept;
        p->kept[p->nkept++].file = NULL;
    } else {
        unsigned m = least_slow(p);
        if (m == UINT32_MAX || dur <= p->kept[m].dur) {
            if (m == UINT32_MAX)
                snprintf(note, note_cap, "not dumped: the budget of %u slow-step dumps is spent", p->budget);
            else
                snprintf(note, note_cap,
                         "not dumped: the %u dumps kept are of slower steps (the least slow: %s, %.3f ms)",
                         p->budget, p->kept[m].what, (double)p->kept[m].dur / 1e6);
            return OP_STEP_NOT_KEPT;
        }
        *slot = m;
    }
    p->kept[*slot].next_dur = dur;
    snprintf(p->kept[*slot].next_what, sizeof p->kept[*slot].next_what, "%s", what);
    p->busy = 1;
    return p->kept[*slot].file ? OP_STEP_REPLACE : OP_STEP_DUMP;
}

/* A step that ran beside a dump, whose steps ran f times slower than
 * before it (0: too few to tell): slow when still slow with the dump's
 * share taken out. */
static int judge_beside(op_flight_policy *p, int64_t dur, const char *what, double f, char *why, size_t why_cap,
                        char *note, size_t note_cap, unsigned *slot)
{
    char base[200];
    /* Beside too few steps to tell how much the dump slowed them, the dump
     * took at most its own time from the step: a step still slow without
     * all of it is slow (a 50 ms step beside a 40 ms dump asked by the
     * step before, which a loaded machine made slow, was not judged at
     * all, and its dump never written). */
    int64_t rest = dur - p->last_cost;
    if (f == 0 && p->last_cost > 0 && rest > 0 && is_slow(p, rest, what, base, sizeof base)) {
        snprintf(why, why_cap, "%s took %.3f ms while a dump of %.3f ms was written: %.3f ms without all of it, slow",
                 what, (double)dur / 1e6, (double)p->last_cost / 1e6, (double)rest / 1e6);
        return take_slot(p, dur, what, note, note_cap, slot);
    }
    if (f == 0 || !is_slow(p, (int64_t)((double)dur / f), what, base, sizeof base)) {
        snprintf(why, why_cap, "%s took %.3f ms", what, (double)dur / 1e6);
        if (f == 0)
            snprintf(note, note_cap, "not judged: it ran while a dump was written, beside too few steps to tell "
                                     "the dump's cost from its own");
        else
            snprintf(note, note_cap, "not dumped: it ran while a dump was written, which slowed the steps beside "
                                     "it %.2fx; without that it was not slow", f);
        return OP_STEP_UNJUDGED;
    }
    snprintf(why, why_cap, "%s took %.3f ms while a dump was written (the steps beside it %.2fx slower): %.3f ms "
             "without that, slow", what, (double)dur / 1e6, f, (double)dur / f / 1e6);
    return take_slot(p, dur, what, note, note_cap, slot);
}

int op_policy_step(op_flight_policy *p, int64_t end_ns, int64_t dur, const char *what, char *why, size_t why_cap,
                   char *note, size_t note_cap, unsigned *slot)
{
    why[0] = note[0] = '\0';
    int slow = is_slow(p, dur, what, why, why_cap);
    if (p->busy) {
        /* Beside a dump: judged when it ends, against the steps that ran
         * beside it too (op_policy_idle). */
        p->unjudged++;
        if (p->nov < OP_POLICY_WINDOW) p->ov[p->nov++] = dur;
        if (slow && dur > p->cand_dur) {
            p->cand_dur = dur;
            snprintf(p->cand_what, sizeof p->cand_what, "%s", what);
        }
        return OP_STEP_UNJUDGED;
    }
    if (end_ns - dur < p->busy_until) { /* began beside the last dump: as its steps were */
        p->unjudged++;
        return slow ? judge_beside(p, dur, what, p->ov_factor, why, why_cap, note, note_cap, slot) : OP_STEP_OK;
    }
    p->window[p->win_at] = dur;
    p->win_at = (p->win_at + 1) % OP_POLICY_WINDOW;
    if (p->nwin < OP_POLICY_WINDOW) p->nwin++;
    if (!slow) return OP_STEP_OK;
    return take_slot(p, dur, what, note, note_cap, slot);
}

void op_policy_written(op_flight_policy *p, unsigned slot, const char *file, char **old, int64_t *old_dur,
                       char *old_what, size_t cap)
{
    *old = NULL;
    if (slot >= p->nkept) return;
    op_kept_dump *k = &p->kept[slot];
    char *copy = file ? strdup(file) : NULL;
    if (!copy) { /* failed: a new place is given back, a replaced dump stays */
        if (!k->file && slot == p->nkept - 1) p->nkept--;
        return;
    }
    if (k->file) {
        *old = k->file;
        *old_dur = k->dur;
        snprintf(old_what, cap, "%s", k->what);
    }
    k->file = copy;
    k->dur = k->next_dur;
    memcpy(k->what, k->next_what, sizeof k->what);
}

void op_policy_busy(op_flight_policy *p)
{
    p->busy = 1;
}

static int64_t median_of(const int64_t *w, unsigned n)
{
    int64_t v[OP_POLICY_WINDOW];
    memcpy(v, w, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int op_policy_idle(op_flight_policy *p, int64_t now, int64_t cost, char *why, size_t why_cap, char *note,
                   size_t note_cap, unsigned *slot)
{
    p->busy = 0;
    p->busy_until = now;
    p->last_cost = cost;
    why[0] = note[0] = '\0';
    /* How much slower the steps beside the dump ran than the steps before
     * it: the dump's own cost, taken out of a slow step's time. A step
     * still slow without it is slow whatever the dump did. */
    p->ov_factor = 0;
    if (p->nov >= 3 && p->nwin >= 1) {
        double m0 = (double)median_of(p->window, p->nwin), m1 = (double)median_of(p->ov, p->nov);
        p->ov_factor = m0 > 0 && m1 > m0 ? m1 / m0 : 1.0;
    }
    int64_t dur = p->cand_dur;
    p->cand_dur = 0;
    p->nov = 0;
    if (!dur) return OP_STEP_OK;
    return judge_beside(p, dur, p->cand_what, p->ov_factor, why, why_cap, note, note_cap, slot);
}

int64_t op_policy_signal(op_flight_policy *p, int64_t now, char *note, size_t note_cap)
{
    note[0] = '\0';
    if (p->budget && p->signal_dumps >= p->budget) {
        snprintf(note, note_cap, "not dumped: the budget of %u signal dumps is spent", p->budget);
        return -1;
    }
    if (p->busy_until) {
        int64_t gap = p->last_cost > SIGNAL_GAP_NS ? p->last_cost : SIGNAL_GAP_NS;
        if (now < p->busy_until + gap) return p->busy_until + gap;
    }
    p->signal_dumps++;
    return 0;
}
