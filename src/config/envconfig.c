/* opprof_config_from_env: the OPPROF_* variables, or one OPPROF_CONFIG
 * string, turned into a session configuration and a trace handler. A bad
 * value is reported, naming the variable, the value and the valid choices,
 * and leaves profiling off: a typo must never stop the program. */
#include "common/rank_env.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "analysis/keyavg.h"
#include "common/error.h"
#include "common/structsize.h"
#include "opprof_trace.h"

enum kind { K_BOOL, K_ACTIVITIES, K_SCHEDULE, K_DIR, K_INT, K_SORT, K_COUNT, K_DEPTH, K_HZ, K_UNWIND };

enum {
    S_ENABLE,
    S_ACTIVITIES,
    S_SCHEDULE,
    S_RECORD_SHAPES,
    S_PROFILE_MEMORY,
    S_WITH_STACK,
    S_WITH_FLOPS,
    S_OUTPUT_TRACE_DIR,
    S_USE_GZIP,
    S_ROW_LIMIT,
    S_SORT_BY,
    S_MAX_EVENTS,
    S_MAX_STACK_DEPTH,
    S_SAMPLE,
    S_SAMPLE_UNWIND,
    S_N
};

static const struct {
    const char *key; /* in OPPROF_CONFIG */
    const char *var; /* its own variable */
    int kind;
} k_settings[S_N] = {
    {"enable", "OPPROF_ENABLE", K_BOOL},
    {"activities", "OPPROF_ACTIVITIES", K_ACTIVITIES},
    {"schedule", "OPPROF_SCHEDULE", K_SCHEDULE},
    {"record_shapes", "OPPROF_RECORD_SHAPES", K_BOOL},
    {"profile_memory", "OPPROF_PROFILE_MEMORY", K_BOOL},
    {"with_stack", "OPPROF_WITH_STACK", K_BOOL},
    {"with_flops", "OPPROF_WITH_FLOPS", K_BOOL},
    {"output_trace_dir", "OPPROF_OUTPUT_TRACE_DIR", K_DIR},
    {"use_gzip", "OPPROF_USE_GZIP", K_BOOL},
    {"row_limit", "OPPROF_ROW_LIMIT", K_INT},
    {"sort_by", "OPPROF_SORT_BY", K_SORT},
    {"max_events", "OPPROF_MAX_EVENTS", K_COUNT},
    {"max_stack_depth", "OPPROF_MAX_STACK_DEPTH", K_DEPTH},
    {"sample", "OPPROF_SAMPLE", K_HZ},
    {"sample_unwind", "OPPROF_SAMPLE_UNWIND", K_UNWIND},
};

static int parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno) return -1;
    *out = v;
    return 0;
}

static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0) return *out = 0, 0;
    }
    return -1;
}

static int parse_activities(const char *s, uint32_t *out)
{
    uint32_t a = 0;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        while (n && *p == ' ') p++, n--;
        while (n && p[n - 1] == ' ') n--;
        if (n == 3 && strncasecmp(p, "cpu", 3) == 0) a |= OPPROF_ACTIVITY_CPU;
        else if (n == 4 && strncasecmp(p, "cuda", 4) == 0) a |= OPPROF_ACTIVITY_CUDA;
        else return -1;
        if (!comma) break;
        p = comma + 1;
    }
    *out = a;
    return 0;
}

/* Reports a bad value: one stderr line and the detail. */
static int bad_value(const char *label, const char *value, const char *valid)
{
    op_fail(OPPROF_E_INVAL, "%s=%s is not valid; valid: %s; profiling stays off", label, value, valid);
    fprintf(stderr, "opprof: %s\n", opprof_last_error());
    return OPPROF_E_INVAL;
}

static int apply(int which, const char *label, const char *v, opprof_config *cfg, opprof_env *env)
{
    opprof_trace_handler *h = &env->handler;
    int b;
    int64_t n;
    switch (k_settings[which].kind) {
    case K_BOOL:
        if (parse_bool(v, &b) != 0) return bad_value(label, v, "1, 0, true, false, yes, no, on, off");
        if (which == S_ENABLE) env->enabled = b;
        if (which == S_RECORD_SHAPES) cfg->record_shapes = b;
        if (which == S_PROFILE_MEMORY) cfg->profile_memory = b;
        if (which == S_WITH_STACK) cfg->with_stack = b;
        if (which == S_WITH_FLOPS) cfg->with_flops = b;
        if (which == S_USE_GZIP) h->use_gzip = b;
        return OPPROF_OK;
    case K_ACTIVITIES:
        if (parse_activities(v, &cfg->activities) != 0) return bad_value(label, v, "cpu, cuda, cpu,cuda");
        return OPPROF_OK;
    case K_SCHEDULE:
        if (opprof_schedule_parse(v, &cfg->schedule) != OPPROF_OK) {
            char why[400];
            snprintf(why, sizeof why, "%s", opprof_last_error());
            return bad_value(label, v, why);
        }
        return OPPROF_OK;
    case K_DIR:
        if (strlen(v) >= sizeof h->dir) return bad_value(label, v, "a directory name shorter than 1024 bytes");
        snprintf(h->dir, sizeof h->dir, "%s", v);
        return OPPROF_OK;
    case K_INT:
        if (parse_i64(v, &n) != 0 || n < -1 || n > 1000000000)
            return bad_value(label, v, "a whole number of rows, -1 for all");
        h->row_limit = (int)n;
        h->print_table = 1;
        return OPPROF_OK;
    case K_SORT:
        /* The table's own list of keys decides, and names them when wrong. */
        if (!op_avg_sort_key(v)) {
            char valid[512];
            const char *list = strstr(opprof_last_error(), "valid keys: ");
            snprintf(valid, sizeof valid, "%s", list ? list + 12 : "see opprof_key_averages_sort");
            return bad_value(label, v, valid);
        }
        snprintf(h->sort_by, sizeof h->sort_by, "%s", v);
        h->print_table = 1;
        return OPPROF_OK;
    case K_HZ:
        if (parse_bool(v, &b) == 0) {
            cfg->sample_hz = b ? OPPROF_DEFAULT_SAMPLE_HZ : 0;
            return OPPROF_OK;
        }
        if (parse_i64(v, &n) != 0 || n < 1 || n > 100000)
            return bad_value(label, v, "on, off, or samples per second of CPU time from 1 to 100000");
        cfg->sample_hz = (unsigned)n;
        return OPPROF_OK;
    case K_UNWIND:
        if (!strcmp(v, "auto")) cfg->sample_unwind = OPPROF_UNWIND_AUTO;
        else if (!strcmp(v, "fp")) cfg->sample_unwind = OPPROF_UNWIND_FP;
        else if (!strcmp(v, "libunwind")) cfg->sample_unwind = OPPROF_UNWIND_LIBUNWIND;
        else return bad_value(label, v, "auto, fp, libunwind");
        return OPPROF_OK;
    case K_DEPTH:
        if (parse_i64(v, &n) != 0 || n < 1 || n > 128) return bad_value(label, v, "a number of frames from 1 to 128");
        cfg->max_stack_depth = (unsigned)n;
        return OPPROF_OK;
    default: /* K_COUNT */
        if (parse_i64(v, &n) != 0 || n < 1) return bad_value(label, v, "a whole number of events >= 1");
        cfg->max_events = (uint64_t)n;
        return OPPROF_OK;
    }
}

/* Splits "k=v;k2=v2" (in place) into values per setting. */
static int split_settings(char *s, const char *vals[S_N])
{
    for (char *item = s; item && *item;) {
        char *semi = strchr(item, ';');
        if (semi) *semi = '\0';
        while (*item == ' ' || *item == '\t' || *item == '\n') item++;
        if (*item) {
            char *eq = strchr(item, '=');
            if (!eq) return bad_value("OPPROF_CONFIG", item, "key=value items separated by ';'");
            char *ke = eq;
            while (ke > item && (ke[-1] == ' ' || ke[-1] == '\t')) ke--;
            *ke = '\0';
            char *v = eq + 1;
            while (*v == ' ' || *v == '\t') v++;
            char *ve = v + strlen(v);
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\n')) *--ve = '\0';
            int found = -1;
            for (int i = 0; i < S_N; i++)
                if (strcmp(item, k_settings[i].key) == 0) found = i;
            if (found < 0) {
                char valid[400];
                size_t k = 0;
                for (int i = 0; i < S_N; i++)
                    k += (size_t)snprintf(valid + k, sizeof valid - k, "%s%s", i ? ", " : "", k_settings[i].key);
                char label[160];
                snprintf(label, sizeof label, "OPPROF_CONFIG key %s", item);
                return bad_value(label, v, valid);
            }
            vals[found] = v;
        }
        item = semi ? semi + 1 : NULL;
    }
    return OPPROF_OK;
}

/* Fills the library's full cfg and env. */
static int fill(opprof_config *cfg, opprof_env *env, const char *settings, int use_env)
{
    opprof_config_init(cfg);
    memset(env, 0, sizeof *env);
    opprof_trace_handler_init(&env->handler, NULL, NULL, 0);
    /* The table's defaults are the opprof command's (the guide's
     * table(sort_by="cpu_time_total", row_limit=10)), so the same program
     * prints the same rows under opprof exec and from the environment. */
    snprintf(env->handler.sort_by, sizeof env->handler.sort_by, "cpu_time_total");
    env->handler.row_limit = 10;
    if (!op_rank_from_env(&env->rank, NULL)) env->rank = (int64_t)getpid();
    char *copy = settings ? strdup(settings) : NULL;
    if (settings && !copy) return op_fail(OPPROF_E_NOMEM, "out of memory");
    const char *vals[S_N] = {0};
    int rc = copy ? split_settings(copy, vals) : OPPROF_OK;
    int any = 0, enable_given = 0;
    for (int i = 0; i < S_N && rc == OPPROF_OK; i++) {
        const char *v = use_env ? getenv(k_settings[i].var) : NULL;
        char label[96];
        if (v && *v) {
            snprintf(label, sizeof label, "%s", k_settings[i].var);
        } else if (vals[i]) {
            v = vals[i];
            snprintf(label, sizeof label, "OPPROF_CONFIG %s", k_settings[i].key);
        } else {
            continue;
        }
        rc = apply(i, label, v, cfg, env);
        if (i == S_ENABLE) enable_given = 1;
        else any = 1;
    }
    free(copy);
    if (rc != OPPROF_OK) {
        opprof_config_init(cfg);
        memset(env, 0, sizeof *env);
        return rc;
    }
    if (!enable_given) env->enabled = any;
    opprof_trace_handler *h = &env->handler;
    /* With a schedule each cycle keeps a file of its own, named as
     * tensorboard_trace_handler names them (worker, step, time); without
     * one there is one trace, at exit. */
    if (h->dir[0] && cfg->schedule.enabled)
        snprintf(h->file_name, sizeof h->file_name, "profile_%lld.step{step}.{time}.pt.trace.json",
                 (long long)env->rank);
    else if (h->dir[0])
        snprintf(h->file_name, sizeof h->file_name, "profile_%lld.json", (long long)env->rank);
    else h->table_only = 1;
    if (h->print_table) h->table_out = stderr; /* stdout may be the program's data */
    if (env->enabled && (h->dir[0] || h->print_table)) {
        cfg->on_trace_ready = opprof_trace_handler_ready;
        cfg->user = h;
        cfg->output_dir = h->dir[0] ? h->dir : NULL;
    }
    op_clear_error();
    return OPPROF_OK;
}

/* The program's cfg and env may be smaller (or larger) than the library's
 * (include/opprof.h, at the top): both are filled in full structs here and
 * written into the program's, the bytes it has; the config's pointers into
 * the env then point into the program's env. */
static int from(opprof_config *user_cfg, size_t cfg_size, opprof_env *user_env, size_t env_size,
                const char *settings, int use_env)
{
    const char *fn = use_env ? "opprof_config_from_env" : "opprof_config_from_string";
    if (!user_cfg || !user_env) return op_fail(OPPROF_E_INVAL, "%s: NULL argument", fn);
    size_t at = offsetof(opprof_env, handler);
    /* The handler needs every field the environment sets. */
    size_t need = offsetof(opprof_trace_handler, export_options);
    int rc = op_struct_size_ok(cfg_size, sizeof(opprof_config), sizeof(size_t), fn, "opprof_config");
    if (rc == OPPROF_OK && env_size < at + need)
        rc = op_fail(OPPROF_E_INVAL, "%s: env size %zu is no opprof_env's", fn, env_size);
    if (rc == OPPROF_OK)
        rc = op_struct_size_ok(env_size - at, sizeof(opprof_trace_handler), need, fn, "opprof_trace_handler");
    if (rc != OPPROF_OK) return rc;
    opprof_config cfg;
    opprof_env env;
    rc = fill(&cfg, &env, settings, use_env);
    op_struct_out(user_cfg, cfg_size, &cfg, sizeof cfg);
    memcpy(user_env, &env, at);
    op_struct_out(&user_env->handler, env_size - at, &env.handler, sizeof env.handler);
    if (cfg.user == &env.handler) user_cfg->user = &user_env->handler;
    if (cfg.output_dir == env.handler.dir) user_cfg->output_dir = user_env->handler.dir;
    return rc;
}

int opprof_config_from_env_size(opprof_config *cfg, size_t cfg_size, opprof_env *env, size_t env_size)
{
    return from(cfg, cfg_size, env, env_size, getenv("OPPROF_CONFIG"), 1);
}

int opprof_config_from_string_size(opprof_config *cfg, size_t cfg_size, opprof_env *env, size_t env_size,
                                   const char *settings)
{
    return from(cfg, cfg_size, env, env_size, settings ? settings : "", 0);
}
