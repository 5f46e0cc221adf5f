/* opprof run MODEL [options]: runs a built-in model (nn/) under the profiler
 * and prints PyTorch's key-averages table, so every example of the PyTorch
 * profiler guide has a one-line equivalent.
 *
 * Options are rows of one table (name, argument, field, help, example):
 * parsing, validation and --help all come from it, so a new option is one
 * row plus the code that uses its field. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opprof.h"
#include "opprof_nn.h"

typedef struct run_opts {
    const char *model;
    long batch, image_size, steps, warmup, threads;
    long seed;
    const char *sort;
    long row_limit;
    int group_by_input_shape, shapes, flops;
} run_opts;

typedef enum opt_kind { OPT_FLAG, OPT_LONG, OPT_STRING } opt_kind;

typedef struct run_option {
    const char *name;
    const char *arg; /* metavariable; NULL for a flag */
    opt_kind kind;
    size_t offset;   /* of the field in run_opts */
    long min, max;   /* OPT_LONG bounds */
    const char *help;
    const char *example;
} run_option;

#define FIELD(f) offsetof(run_opts, f)

static const run_option OPTIONS[] = {
    {"--batch", "N", OPT_LONG, FIELD(batch), 1, 4096,
     "batch size (default: resnet18 5, resnet18-train 8, mlp-train 32)", "opprof run resnet18 --batch 1"},
    {"--image-size", "PX", OPT_LONG, FIELD(image_size), 16, 4096,
     "height and width of the input images (default 224; mlp-train: its 64 input features)",
     "opprof run resnet18 --image-size 112"},
    {"--steps", "N", OPT_LONG, FIELD(steps), 1, 1000000,
     "forward passes (resnet18) or training steps profiled (default 1; mlp-train 3)",
     "opprof run resnet18-train --steps 3"},
    {"--warmup", "N", OPT_LONG, FIELD(warmup), 0, 1000000,
     "passes run before profiling starts, so one-time setup is not in the table (default 1)",
     "opprof run resnet18 --warmup 0"},
    {"--threads", "N", OPT_LONG, FIELD(threads), 0, 4096, "threads for the operators; 0: OMP_NUM_THREADS, else all cores (default 0)",
     "opprof run resnet18 --threads 1"},
    {"--seed", "S", OPT_LONG, FIELD(seed), 0, LONG_MAX, "seed of the weights and the input data (default 0)",
     "opprof run resnet18 --seed 42"},
    {"--sort", "KEY", OPT_STRING, FIELD(sort), 0, 0,
     "table order: cpu_time_total, self_cpu_time_total, cpu_time, count, flops, cpu_memory_usage, "
     "self_cpu_memory_usage (default cpu_time_total)",
     "opprof run resnet18 --sort self_cpu_time_total"},
    {"--row-limit", "N", OPT_LONG, FIELD(row_limit), -1, INT_MAX, "rows printed; -1: all (default 10)",
     "opprof run resnet18 --row-limit -1"},
    {"--shapes", NULL, OPT_FLAG, FIELD(shapes), 0, 0, "record operator input shapes (record_shapes=True)",
     "opprof run resnet18 --shapes"},
    {"--group-by-input-shape", NULL, OPT_FLAG, FIELD(group_by_input_shape), 0, 0,
     "one row per (name, input shapes); implies --shapes", "opprof run resnet18 --group-by-input-shape"},
    {"--flops", NULL, OPT_FLAG, FIELD(flops), 0, 0, "count FLOPs (with_flops=True): a Total FLOPs column",
     "opprof run resnet18 --flops --sort flops"},
};

#define N_OPTIONS (sizeof OPTIONS / sizeof *OPTIONS)

/* ---- the models ---- */

typedef struct run_ctx {
    const run_opts *o;
    opprof_nn_model *model;
    opprof_nn_sgd *sgd;
    opprof_nn_tensor *x;
    int64_t *targets;
    int train;
} run_ctx;

typedef struct model_spec {
    const char *name;
    const char *summary;
    long batch, steps;
    int train;
} model_spec;

static const model_spec MODELS[] = {
    {"resnet18", "torchvision ResNet-18, inference (eval mode, batch x 3 x 224 x 224)", 5, 1, 0},
    {"resnet18-train", "ResNet-18 training steps: forward, cross-entropy, backward, SGD", 8, 1, 1},
    {"mlp-train", "Linear(64,128)-ReLU-Linear(128,10) training steps with SGD", 32, 3, 1},
};

static int setup(run_ctx *c, const model_spec *ms)
{
    const run_opts *o = c->o;
    int is_mlp = !strcmp(ms->name, "mlp-train"), classes = is_mlp ? 10 : 1000, rc;
    if (is_mlp) {
        const int sizes[3] = {(int)o->image_size, 128, 10};
        rc = opprof_nn_mlp(3, sizes, (uint64_t)o->seed, &c->model);
    } else
        rc = opprof_nn_resnet18(classes, (uint64_t)o->seed, &c->model);
    if (rc) return rc;
    int64_t img[4] = {o->batch, 3, o->image_size, o->image_size}, vec[2] = {o->batch, o->image_size};
    rc = is_mlp ? opprof_nn_tensor_new(2, vec, &c->x) : opprof_nn_tensor_new(4, img, &c->x);
    if (rc) return rc;
    opprof_nn_tensor_normal(c->x, 0.0f, 1.0f, (uint64_t)o->seed + 1);
    c->train = ms->train;
    if (!c->train) return OPPROF_OK;
    c->targets = malloc((size_t)o->batch * sizeof *c->targets);
    if (!c->targets) return OPPROF_E_NOMEM;
    for (long i = 0; i < o->batch; i++) c->targets[i] = (i * 7 + o->seed) % classes;
    opprof_nn_sgd_options so = {is_mlp ? 0.1f : 0.01f, 0.9f, 0.0f, is_mlp ? 0.0f : 1e-4f, 0};
    return opprof_nn_sgd_new(c->model, &so, &c->sgd);
}

/* One inference or one training step. */
static int run_step(run_ctx *c)
{
    if (c->train) {
        float loss;
        return opprof_nn_train_step(c->model, c->sgd, c->x, c->targets, &loss);
    }
    opprof_nn_tensor *y = NULL;
    int rc = opprof_nn_model_forward(c->model, c->x, 0, &y);
    opprof_nn_tensor_release(y);
    return rc;
}

static void teardown(run_ctx *c)
{
    opprof_nn_sgd_free(c->sgd);
    opprof_nn_model_free(c->model);
    opprof_nn_tensor_release(c->x);
    free(c->targets);
}

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: opprof run MODEL [options]\n\n"
               "Runs a built-in model under the profiler and prints the key-averages table\n"
               "(PyTorch's prof.key_averages().table()), sorted by cpu_time_total, 10 rows.\n\n"
               "models:\n");
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) fprintf(f, "  %-16s %s\n", MODELS[i].name, MODELS[i].summary);
    fprintf(f, "\noptions:\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const run_option *op = &OPTIONS[i];
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", op->name, op->arg ? " " : "", op->arg ? op->arg : "");
        fprintf(f, "  %-26s %s\n  %-26s   e.g. %s\n", head, op->help, "", op->example);
    }
    fprintf(f, "  %-26s %s\n", "-h, --help", "this text");
    fprintf(f, "\nexamples:\n"
               "  opprof run resnet18                                the guide's first table\n"
               "  opprof run resnet18 --group-by-input-shape         ... split by input shapes\n"
               "  opprof run resnet18 --flops --sort flops           ... with FLOPs\n"
               "  opprof run mlp-train --steps 3 --row-limit -1      a training loop, every row\n");
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *out = v;
    return 0;
}

static int set_option(run_opts *o, const run_option *op, const char *arg)
{
    char *field = (char *)o + op->offset;
    long v;
    switch (op->kind) {
    case OPT_FLAG:
        *(int *)field = 1;
        return 0;
    case OPT_STRING:
        *(const char **)field = arg;
        return 0;
    case OPT_LONG:
        if (parse_long(arg, &v) || v < op->min || v > op->max) {
            fprintf(stderr, "opprof run: %s wants an integer from %ld to %ld, not '%s'\n", op->name, op->min,
                    op->max, arg);
            return -1;
        }
        *(long *)field = v;
        return 0;
    }
    return -1;
}

/* Fills o from argv (argv[0] is "run"). Returns 0, 1 for --help, -1 on a
 * bad command line (reported). */
static int parse(int argc, char **argv, run_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
        if (a[0] != '-' || !a[1]) {
            if (o->model) {
                fprintf(stderr, "opprof run: one model only ('%s' and '%s')\n", o->model, a);
                return -1;
            }
            o->model = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const run_option *op = NULL;
        for (size_t k = 0; k < N_OPTIONS; k++)
            if (strlen(OPTIONS[k].name) == len && !strncmp(OPTIONS[k].name, a, len)) op = &OPTIONS[k];
        if (!op) {
            fprintf(stderr, "opprof run: unknown option '%s' (see opprof run --help)\n", a);
            return -1;
        }
        const char *arg = NULL;
        if (op->arg) {
            arg = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!arg) {
                fprintf(stderr, "opprof run: %s needs %s\n", op->name, op->arg);
                return -1;
            }
        } else if (eq) {
            fprintf(stderr, "opprof run: %s takes no value\n", op->name);
            return -1;
        }
        if (set_option(o, op, arg)) return -1;
    }
    if (!o->model) {
        fprintf(stderr, "opprof run: which model? (resnet18, resnet18-train, mlp-train)\n");
        return -1;
    }
    return 0;
}

/* ---- the run ---- */

/* Checks the sort key before the model runs, with the table's own
 * validator, on the key averages of an empty session. */
static int check_sort_key(const char *key)
{
    opprof_config cfg;
    opprof_config_init(&cfg);
    opprof_trace *tr = NULL;
    opprof_key_averages *ka = NULL;
    int rc = opprof_start(&cfg);
    if (!rc) rc = opprof_stop(&tr);
    if (!rc) rc = opprof_key_averages(tr, NULL, &ka);
    if (!rc) rc = opprof_key_averages_sort(ka, key);
    if (rc) fprintf(stderr, "opprof run: --sort %s: %s\n", key, *opprof_last_error() ? opprof_last_error() : opprof_strerror(rc));
    opprof_key_averages_free(ka);
    opprof_trace_free(tr);
    return rc;
}

static int print_table(const opprof_trace *tr, const run_opts *o)
{
    opprof_avg_options ao = {o->group_by_input_shape, 0, 0};
    opprof_key_averages *ka = NULL;
    int rc = opprof_key_averages(tr, &ao, &ka);
    if (!rc) rc = opprof_table_write(ka, o->sort, (int)o->row_limit, stdout);
    if (!rc) putchar('\n'); /* the table text ends without one, as PyTorch's does */
    if (rc) fprintf(stderr, "opprof run: %s: %s\n", opprof_strerror(rc), opprof_last_error());
    opprof_key_averages_free(ka);
    return rc;
}

static int run_model(const run_opts *o, const model_spec *ms)
{
    run_ctx c = {o, NULL, NULL, NULL, NULL, 0};
    opprof_nn_set_threads((int)o->threads);
    int rc = setup(&c, ms);
    for (long i = 0; !rc && i < o->warmup; i++) rc = run_step(&c);
    opprof_trace *tr = NULL;
    if (!rc) {
        opprof_config cfg;
        opprof_config_init(&cfg);
        cfg.record_shapes = o->shapes || o->group_by_input_shape;
        cfg.with_flops = o->flops;
        rc = opprof_start(&cfg);
        for (long i = 0; !rc && i < o->steps; i++) rc = run_step(&c);
        int stop_rc = opprof_stop(&tr);
        if (!rc) rc = stop_rc;
    }
    if (!rc) {
        fprintf(stderr, "opprof run: %s, batch %ld, %ld %s%s, %d thread%s\n", ms->name, o->batch, o->steps,
                c.train ? "training step" : "forward pass", o->steps == 1 ? "" : c.train ? "s" : "es",
                opprof_nn_threads(), opprof_nn_threads() == 1 ? "" : "s");
        rc = print_table(tr, o);
    } else
        fprintf(stderr, "opprof run: %s: %s\n", ms->name, opprof_strerror(rc));
    opprof_trace_free(tr);
    teardown(&c);
    opprof_nn_shutdown();
    return rc ? CLI_FAIL : CLI_OK;
}

int cmd_run(int argc, char **argv)
{
    run_opts o = {NULL, -1, -1, -1, 1, 0, 0, "cpu_time_total", 10, 0, 0, 0};
    int p = parse(argc, argv, &o);
    if (p == 1) {
        usage(stdout);
        return CLI_OK;
    }
    if (p < 0) return CLI_BAD_INPUT;
    const model_spec *ms = NULL;
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++)
        if (!strcmp(MODELS[i].name, o.model)) ms = &MODELS[i];
    if (!ms) {
        fprintf(stderr, "opprof run: unknown model '%s' (resnet18, resnet18-train, mlp-train)\n", o.model);
        return CLI_BAD_INPUT;
    }
    if (check_sort_key(o.sort)) return CLI_BAD_INPUT;
    if (o.batch < 0) o.batch = ms->batch;
    if (o.steps < 0) o.steps = ms->steps;
    if (o.image_size < 0) o.image_size = !strcmp(ms->name, "mlp-train") ? 64 : 224;
    return run_model(&o, ms);
}
