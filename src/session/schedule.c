/* torch.profiler.schedule and the transitions of torch.profiler.profile,
 * written from their documented behaviour (torch 1.13 to 2.x, with
 * skip_first_wait from the newer releases), plus the text form the CLI and
 * the environment use. */
#include "session/schedule.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

opprof_action opprof_schedule_action(const opprof_schedule *s, int64_t step)
{
    if (step < 0) return OPPROF_ACTION_NONE;
    if (!s || !s->enabled) return OPPROF_ACTION_RECORD; /* torch's default: record every step */
    if (s->fn) {
        opprof_action a = s->fn(step, s->fn_ctx);
        return a >= OPPROF_ACTION_NONE && a <= OPPROF_ACTION_RECORD_AND_SAVE ? a : OPPROF_ACTION_NONE;
    }
    if (!s->active) return OPPROF_ACTION_NONE; /* rejected by opprof_schedule_check */
    uint64_t st = (uint64_t)step;
    if (st < s->skip_first) return OPPROF_ACTION_NONE;
    st -= s->skip_first;
    if (s->skip_first_wait) st += s->wait; /* the first cycle starts at its warmup */
    uint64_t cycle = (uint64_t)s->wait + s->warmup + s->active;
    if (s->repeat && st / cycle >= s->repeat) return OPPROF_ACTION_NONE;
    uint64_t m = st % cycle;
    if (m < s->wait) return OPPROF_ACTION_NONE;
    if (m < (uint64_t)s->wait + s->warmup) return OPPROF_ACTION_WARMUP;
    return m < cycle - 1 ? OPPROF_ACTION_RECORD : OPPROF_ACTION_RECORD_AND_SAVE;
}

int opprof_schedule_check(const opprof_schedule *s)
{
    if (!s) return op_fail(OPPROF_E_INVAL, "schedule is NULL");
    if (s->enabled && !s->fn && s->active == 0)
        return op_fail(OPPROF_E_INVAL, "invalid profiler schedule: active must be at least 1 (wait=%u warmup=%u active=0)",
                       s->wait, s->warmup);
    return OPPROF_OK;
}

const char *op_sched_config_warning(const opprof_schedule *s)
{
    if (s && s->enabled && !s->fn && s->warmup == 0)
        return "Profiler won't be using warmup, this can skew profiler results";
    return NULL;
}

/* ---- transitions: torch.profiler.profile's action_map ---- */

#define OPS0() {0, {0}, NULL}
#define OPS(n, a, b, c, d) {n, {a, b, c, d}, NULL}
#define WARN3(msg, a, b) {3, {OP_SCHED_WARN, a, b, 0}, msg}
#define WARN2(msg, a) {2, {OP_SCHED_WARN, a, 0, 0}, msg}

enum { P = OP_SCHED_PREPARE, S = OP_SCHED_START, T = OP_SCHED_STOP, R = OP_SCHED_READY };

/* [prev][cur], cur 4 standing for the exit. */
static const op_sched_ops k_map[4][5] = {
    /* from NONE */
    {OPS0(), OPS(1, P, 0, 0, 0), OPS(2, P, S, 0, 0), OPS(2, P, S, 0, 0), OPS0()},
    /* from WARMUP */
    {WARN3("Incorrect schedule: WARMUP followed by NONE", S, T), OPS0(), OPS(1, S, 0, 0, 0), OPS(1, S, 0, 0, 0),
     OPS(2, S, T, 0, 0)},
    /* from RECORD */
    {WARN2("Incorrect schedule: RECORD followed by NONE", T), WARN2("Incorrect schedule: RECORD followed by WARMUP", T),
     OPS0(), OPS0(), OPS(2, T, R, 0, 0)},
    /* from RECORD_AND_SAVE */
    {OPS(2, T, R, 0, 0), OPS(3, T, R, P, 0), OPS(4, T, R, P, S), OPS(4, T, R, P, S), OPS(2, T, R, 0, 0)},
};

const op_sched_ops *op_sched_transition(int prev, int cur)
{
    static const op_sched_ops none = OPS0();
    if (prev < 0 || prev > 3) return &none;
    if (cur == OP_SCHED_EXIT) cur = 4;
    if (cur < 0 || cur > 4) return &none;
    return &k_map[prev][cur];
}

/* Python's warnings show a message once per place; a few slots suffice for
 * the handful of messages there are. */
void op_sched_warn_once(const char *msg)
{
    static _Atomic(const char *) seen[8];
    for (int i = 0; i < 8; i++) {
        const char *cur = atomic_load(&seen[i]);
        if (cur == msg) return;
        if (!cur) {
            const char *expected = NULL;
            if (atomic_compare_exchange_strong(&seen[i], &expected, msg)) break;
            if (expected == msg) return;
        }
    }
    fprintf(stderr, "opprof: warning: %s\n", msg);
}

/* ---- text form ---- */

static const char k_keys[] = "skip_first, wait, warmup, active, repeat, skip_first_wait";
static const char *const k_key_names[] = {"skip_first", "wait", "warmup", "active", "repeat", "skip_first_wait"};

static int key_index(const char *k, size_t klen)
{
    for (int i = 0; i < 6; i++)
        if (strlen(k_key_names[i]) == klen && memcmp(k, k_key_names[i], klen) == 0) return i;
    return -1;
}

static void set_key(opprof_schedule *s, int key, unsigned v)
{
    switch (key) {
    case 0: s->skip_first = v; break;
    case 1: s->wait = v; break;
    case 2: s->warmup = v; break;
    case 3: s->active = v; break;
    case 4: s->repeat = v; break;
    default: s->skip_first_wait = v != 0; break;
    }
}

static const char *trim(const char *s, const char *e, const char **end)
{
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
    *end = e;
    return s;
}

/* Reads a whole number (or true/false for skip_first_wait). */
static int parse_value(int key, const char *v, size_t vlen, unsigned *out)
{
    char num[32];
    if (vlen == 0 || vlen >= sizeof num) return -1;
    memcpy(num, v, vlen);
    num[vlen] = '\0';
    if (key == 5 && (strcmp(num, "true") == 0 || strcmp(num, "false") == 0)) {
        *out = num[0] == 't';
        return 0;
    }
    if (num[0] < '0' || num[0] > '9') return -1;
    char *endp;
    errno = 0;
    unsigned long val = strtoul(num, &endp, 10);
    if (*endp || errno || val > UINT_MAX) return -1;
    *out = (unsigned)val;
    return 0;
}

int opprof_schedule_parse(const char *text, opprof_schedule *out)
{
    if (!out) return op_fail(OPPROF_E_INVAL, "opprof_schedule_parse: out is NULL");
    memset(out, 0, sizeof *out);
    if (!text) return op_fail(OPPROF_E_INVAL, "opprof_schedule_parse: text is NULL");
    opprof_schedule s;
    memset(&s, 0, sizeof s);
    unsigned seen = 0;
    for (const char *p = text; *p;) {
        const char *comma = strchr(p, ',');
        const char *item_end = comma ? comma : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(item_end - p));
        const char *ke, *k = trim(p, eq ? eq : item_end, &ke);
        int klen = (int)(ke - k);
        if (!eq) {
            if (klen == 0 && !comma && seen) break; /* a trailing comma */
            return op_fail(OPPROF_E_PARSE, "schedule: '%.*s' is not key=value (valid keys: %s)", klen, k, k_keys);
        }
        const char *ve, *v = trim(eq + 1, item_end, &ve);
        int key = key_index(k, (size_t)klen);
        if (key < 0) return op_fail(OPPROF_E_PARSE, "schedule: unknown key '%.*s' (valid keys: %s)", klen, k, k_keys);
        unsigned val;
        if (parse_value(key, v, (size_t)(ve - v), &val) != 0)
            return op_fail(OPPROF_E_PARSE, "schedule: %.*s=%.*s is not valid (valid: a whole number >= 0%s)", klen, k,
                           (int)(ve - v), v, key == 5 ? ", true or false" : "");
        if (seen & (1u << key)) return op_fail(OPPROF_E_PARSE, "schedule: '%.*s' is given twice", klen, k);
        seen |= 1u << key;
        set_key(&s, key, val);
        if (!comma) break;
        p = comma + 1;
    }
    if (!seen)
        return op_fail(OPPROF_E_PARSE, "schedule: empty; expected e.g. skip_first=10,wait=5,warmup=1,active=3,repeat=2 "
                                       "(valid keys: %s)", k_keys);
    if (s.active == 0)
        return op_fail(OPPROF_E_PARSE, "schedule: active must be at least 1, as torch.profiler.schedule asserts "
                                       "(valid keys: %s)", k_keys);
    s.enabled = 1;
    *out = s;
    return OPPROF_OK;
}

int opprof_schedule_format(const opprof_schedule *s, char *buf, size_t size)
{
    if (!s || !s->enabled) {
        if (buf && size) buf[0] = '\0';
        return 0;
    }
    return snprintf(buf, size, "skip_first=%u,wait=%u,warmup=%u,active=%u,repeat=%u%s", s->skip_first, s->wait,
                    s->warmup, s->active, s->repeat, s->skip_first_wait ? ",skip_first_wait=1" : "");
}
