/* opprof run MODEL [options]: runs a built-in model (nn/) under the profiler
 * and prints PyTorch's key-averages table, so every example of the PyTorch
 * profiler guide has a one-line equivalent.
 *
 * Options are rows of one table (opts.h): parsing, validation and --help all
 * come from it, so a new option is one row plus the code that uses its
 * field in run_opts. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opprof_trace.h"
#include "opprof_nn.h"
#include "opts.h"
#include "run_cuda.h"
#include "run_dist.h"
#include "vocab.h"
#include "run_flight.h"

typedef struct run_opts {
    const char *model;
    long batch, image_size, steps, warmup, threads;
    long seed;
    const char *sort, *format;
    const char *device, *activities, *trace;
    long row_limit, max_events;
    int group_by_input_shape, shapes, flops;
    int memory, stack, gzip;
    long group_by_stack, sample;
    const char *memory_timeline, *schedule, *trace_dir, *stacks_out, *stacks_metric;
    const char *report;
    int distributed, print_loss;
    char run_id[32]; /* --distributed: the run's name, the same on every rank */
    const char *flight, *slow_step, *slow_range, *flight_file, *inject_delay;
    run_flight fl; /* the five above, checked */
} run_opts;

#define FIELD(f) offsetof(run_opts, f)

static const cli_option OPTIONS[] = {
    {"--batch", "N", CLI_OPT_LONG, FIELD(batch), 1, 4096, NULL,
     "batch size (default: resnet18 5, resnet18-train 8, mlp-train 32)" CLI_EXAMPLE("opprof run resnet18 --batch 1")},
    {"--image-size", "PX", CLI_OPT_LONG, FIELD(image_size), 16, 4096, NULL,
     "image height and width (default 224); mlp-train: input features (64)"
         CLI_EXAMPLE("opprof run resnet18 --image-size 112")},
    {"--steps", "N", CLI_OPT_LONG, FIELD(steps), 1, 1000000, NULL,
     "passes profiled: forwards or training steps (default 1; mlp-train 3)"
         CLI_EXAMPLE("opprof run resnet18-train --steps 3")},
    {"--warmup", "N", CLI_OPT_LONG, FIELD(warmup), 0, 1000000, NULL,
     "passes before profiling starts, keeping setup out of the table (default 1)"
         CLI_EXAMPLE("opprof run resnet18 --warmup 0")},
    {"--threads", "N", CLI_OPT_LONG, FIELD(threads), 0, 4096, NULL,
     "threads for the operators; 0: OMP_NUM_THREADS, else all cores (default 0)"
         CLI_EXAMPLE("opprof run resnet18 --threads 1")},
    {"--seed", "S", CLI_OPT_LONG, FIELD(seed), 0, LONG_MAX, NULL,
     "seed of the weights and the input data (default 0)" CLI_EXAMPLE("opprof run resnet18 --seed 42")},
    CLI_ROW_SORT(FIELD(sort), CLI_EXAMPLE("opprof run resnet18 --sort self_cpu_time_total")),
    {"--device", "DEV", CLI_OPT_STRING, FIELD(device), 0, 0, "cpu|cuda",
     "where the model runs: cpu (default), or cuda: resnet18 on the GPU runtime\n"
     "                             (cuDNN convolutions, cuBLAS, CUDA C kernels)"
         CLI_EXAMPLE("opprof run resnet18 --device cuda")},
    {"--activities", "LIST", CLI_OPT_STRING, FIELD(activities), 0, 0, "cpu|cuda|cpu,cuda",
     "what is recorded (ProfilerActivity): cpu, cuda or cpu,cuda; default cpu,\n"
     "                             cpu,cuda with --device cuda"
         CLI_EXAMPLE("opprof run resnet18 --device cuda --activities cpu,cuda --sort self_cuda_time_total")},
    {"--trace", "FILE", CLI_OPT_STRING, FIELD(trace), 0, 0, NULL,
     "write a Chrome trace (chrome://tracing, Perfetto); gzip'd when FILE ends\n"
     "                             in .gz, Perfetto's protobuf when in .pftrace; written as the\n"
     "                             passes run when a table is the only other output; with\n"
     "                             --schedule, each cycle's (the last stays)"
         CLI_EXAMPLE("opprof run resnet18 --trace trace.json")},
    CLI_ROW_ROW_LIMIT(FIELD(row_limit), CLI_EXAMPLE("opprof run resnet18 --row-limit -1")),
    CLI_ROW_FORMAT(FIELD(format), CLI_EXAMPLE("opprof run resnet18 --format csv")),
    CLI_ROW_MAX_EVENTS_RECORD(FIELD(max_events), "",
                              CLI_EXAMPLE("opprof run resnet18 --steps 1000 --max-events 50000000")),
    {"--shapes", NULL, CLI_OPT_FLAG, FIELD(shapes), 0, 0, NULL,
     "record operator input shapes (record_shapes=True)" CLI_EXAMPLE("opprof run resnet18 --shapes")},
    CLI_ROW_GROUP_BY_INPUT_SHAPE(FIELD(group_by_input_shape), "one row per (name, input shapes); implies --shapes",
                                 CLI_EXAMPLE("opprof run resnet18 --group-by-input-shape")),
    {"--flops", NULL, CLI_OPT_FLAG, FIELD(flops), 0, 0, NULL,
     "count FLOPs (with_flops=True): a Total FLOPs column" CLI_EXAMPLE("opprof run resnet18 --flops --sort flops")},
    {"--memory", NULL, CLI_OPT_FLAG, FIELD(memory), 0, 0, NULL,
     "record tensor allocations (profile_memory=True): CPU Mem and Self CPU Mem\n"
     "                             columns, and the peak under the table"
         CLI_EXAMPLE("opprof run resnet18 --memory --sort self_cpu_memory_usage")},
    {"--memory-timeline", "FILE", CLI_OPT_STRING, FIELD(memory_timeline), 0, 0, NULL,
     "write live bytes after each allocation and free, CSV (JSON when FILE ends\n"
     "                             in .json); implies --memory"
         CLI_EXAMPLE("opprof run resnet18 --memory-timeline mem.csv")},
    {"--schedule", "SPEC", CLI_OPT_STRING, FIELD(schedule), 0, 0, NULL,
     "torch.profiler.schedule: steps skip_first, then cycles of wait, warmup and\n"
     "                             active steps, repeat times (0: until the end); a table per cycle"
         CLI_EXAMPLE("opprof run resnet18-train --steps 30 --schedule skip_first=10,wait=5,warmup=1,active=3,repeat=2")},
    {"--trace-dir", "DIR", CLI_OPT_STRING, FIELD(trace_dir), 0, 0, NULL,
     "write each trace to DIR/{host}_{pid}.{time_ns}.pt.trace.json\n"
     "                             (tensorboard_trace_handler)"
         CLI_EXAMPLE("opprof run resnet18-train --steps 8 --schedule wait=1,warmup=1,active=2 --trace-dir log")},
    {"--gzip", NULL, CLI_OPT_FLAG, FIELD(gzip), 0, 0, NULL,
     "gzip the files of --trace-dir (.pt.trace.json.gz)"
         CLI_EXAMPLE("opprof run resnet18 --trace-dir log --gzip")},
    CLI_ROW_WITH_STACK(FIELD(stack), "record where each operator was called from (with_stack=True)",
                       CLI_EXAMPLE("opprof run resnet18 --with-stack --trace trace.json")),
    CLI_ROW_STACKS(FIELD(stacks_out),
                   "write folded stacks for flamegraph.pl and speedscope (export_stacks);" CLI_CONT
                   "implies --with-stack",
                   CLI_EXAMPLE("opprof run resnet18 --stacks resnet18.folded")),
    CLI_ROW_STACKS_METRIC(FIELD(stacks_metric),
                          CLI_EXAMPLE("opprof run resnet18 --stacks r.folded --stacks-metric self_cpu_time_total")),
    CLI_ROW_GROUP_BY_STACK(FIELD(group_by_stack), ";" CLI_CONT "implies --with-stack",
                           CLI_EXAMPLE("opprof run resnet18 --group-by-stack 5")),
    {"--report", "FILE", CLI_OPT_STRING, FIELD(report), 0, 0, NULL,
     "also write the run's HTML report: timeline, operators, memory, ... (opprof report)"
         CLI_EXAMPLE("opprof run resnet18 --shapes --flops --report resnet18.html")},
    {"--distributed", NULL, CLI_OPT_FLAG, FIELD(distributed), 0, 0, NULL,
     "data-parallel training under mpirun: each rank trains on its slice of the batch,\n"
     "                             gradients averaged with MPI_Allreduce (DistributedDataParallel);\n"
     "                             rank 0 prints the table; with --trace-dir each rank writes\n"
     "                             DIR/RUN_rank_R.{time}.pt.trace.json, RUN the run's start\n"
     "                             (UTC); 'opprof merge DIR' merges the latest run's"
         CLI_EXAMPLE("mpirun -np 4 opprof run mlp-train --distributed --trace-dir traces")},
    {"--print-loss", NULL, CLI_OPT_FLAG, FIELD(print_loss), 0, 0, NULL,
     "print each profiled training step's loss (the mean over ranks) on stderr"
         CLI_EXAMPLE("opprof run mlp-train --print-loss")},
    {"--sample", "HZ", CLI_OPT_LONG_OPT, FIELD(sample), 1, 100000, NULL,
     "sample the stacks by CPU time (default 1000 Hz): the table gains" CLI_CONT
     "Self On-CPU, On-CPU total and Wait total, and under it the functions" CLI_CONT
     "(oneDNN, OpenBLAS, ...) each of the top operators spends its CPU in" CLI_CONT
     "(the OpenMP pool's samples go to the operator the main thread runs)"},
    CLI_ROW_OLD_WITH_STACK(FIELD(stack)),
    CLI_ROW_OLD_STACKS(FIELD(stacks_out)),
    {"--flight", "SIZE", CLI_OPT_STRING, FIELD(flight), 0, 0, NULL,
     "flight recorder instead of a table: the last SIZE (64M) of events per thread,\n"
     "                             each pass a step; dumped on a slow step or SIGUSR2"
         CLI_EXAMPLE("opprof run resnet18-train --steps 1000 --flight 64M --slow-step 1.5x")},
    {"--slow-step", "T", CLI_OPT_STRING, FIELD(slow_step), 0, 0, NULL,
     "with --flight: dump when a step takes longer than T (50ms), than a multiple\n"
     "                             of the running median (1.5x), or both (1.5x,20ms)"},
    {"--slow", "RANGE", CLI_OPT_STRING, FIELD(slow_range), 0, 0, NULL,
     "with --flight: a step is a range of this name (e.g. aten::conv2d) instead of a pass"},
    {"--flight-file", "PATH", CLI_OPT_STRING, FIELD(flight_file), 0, 0, NULL,
     "with --flight: the dumps' name ({n}: the dump's number, {pid}); default\n"
     "                             opprof_flight_{pid}_{n}.json"},
    {"--inject-delay", "STEP:MS", CLI_OPT_STRING, FIELD(inject_delay), 0, 0, NULL,
     "sleep MS milliseconds inside profiled step STEP (from 0): a slow step on purpose"
         CLI_EXAMPLE("opprof run resnet18-train --steps 50 --flight 64M --slow-step 1.5x --inject-delay 30:500")},
};

static const cli_spec SPEC = {
    "run",
    "MODEL [options]",
    "Runs a built-in model under the profiler and prints its key averages, as PyTorch's\n"
    "prof.key_averages().table(sort_by=\"cpu_time_total\", row_limit=10) does (the defaults of\n"
    "--sort and --row-limit, the same in every opprof command).\n\n"
    "models:\n"
    "  resnet18         torchvision ResNet-18, inference (eval mode, batch x 3 x 224 x 224)\n"
    "  resnet18-train   ResNet-18 training steps: forward, cross-entropy, backward, SGD\n"
    "  mlp-train        Linear(64,128)-ReLU-Linear(128,10) training steps with SGD\n\n"
    "examples:\n"
    "  opprof run resnet18                            the guide's first table\n"
    "  opprof run resnet18 --group-by-input-shape     ... split by input shapes\n"
    "  opprof run resnet18 --flops --sort flops       ... with FLOPs\n"
    "  opprof run resnet18 --memory --sort self_cpu_memory_usage\n"
    "                                                 ... memory per operator\n"
    "  opprof run resnet18 --trace trace.json         ... and a Chrome trace\n"
    "  opprof run resnet18-train --steps 30 --schedule skip_first=10,wait=5,warmup=1,active=3,repeat=2 \\\n"
    "      --trace-dir log                            a long job: a trace and a table per cycle\n"
    "  opprof run resnet18 --stacks r.folded          flame-graph input (flamegraph.pl, speedscope)\n"
    "  opprof run mlp-train --row-limit -1            a training loop, every row\n"
    "  mpirun -np 4 opprof run mlp-train --distributed --trace-dir t   data-parallel, one trace a rank\n\n"
    "Exit status: 0 done, 1 the run failed, 2 bad arguments.",
    OPTIONS,
    sizeof OPTIONS / sizeof *OPTIONS,
    1,
    1,
    0,
};

/* ---- the models ---- */

typedef struct run_ctx {
    const run_opts *o;
    opprof_nn_model *model;
    opprof_nn_sgd *sgd;
    opprof_nn_tensor *x;
    int64_t *targets;
    int train;
    run_cuda *gpu; /* --device cuda */
    int rank, size; /* --distributed: this rank of size; else 0 of 1 */
    long step;      /* profiled steps done */
    int flight_done; /* --flight: the recorder ran (its dumps are the output, not a table) */
} run_ctx;

typedef struct model_spec {
    const char *name;
    long batch, steps;
    int train;
} model_spec;

static const model_spec MODELS[] = {
    {"resnet18", 5, 1, 0},
    {"resnet18-train", 8, 1, 1},
    {"mlp-train", 32, 3, 1},
};

/* --distributed: this rank keeps its slice of the batch (the same batch on
 * every rank, from the seed), as a DistributedSampler gives it. */
static int take_slice(run_ctx *c)
{
    opprof_nn_tensor *x = c->x;
    int64_t rows = x->dims[0] / c->size, first = rows * c->rank, per_row = x->numel / x->dims[0];
    int64_t dims[OPPROF_NN_MAX_DIMS];
    memcpy(dims, x->dims, sizeof dims);
    dims[0] = rows;
    opprof_nn_tensor *mine = NULL;
    int rc = opprof_nn_tensor_from(x->ndim, dims, x->data + first * per_row, (size_t)(rows * per_row), &mine);
    if (rc) return rc;
    opprof_nn_tensor_release(x);
    c->x = mine;
    memmove(c->targets, c->targets + first, (size_t)rows * sizeof *c->targets);
    return OPPROF_OK;
}

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
    if (!strcmp(o->device, "cuda")) return run_cuda_setup(c->model, c->x, classes, &c->gpu);
    if (!c->train) return OPPROF_OK;
    c->targets = malloc((size_t)o->batch * sizeof *c->targets);
    if (!c->targets) return OPPROF_E_NOMEM;
    for (long i = 0; i < o->batch; i++) c->targets[i] = (i * 7 + o->seed) % classes;
    if (c->size > 1 && (rc = take_slice(c)) != OPPROF_OK) return rc;
    opprof_nn_sgd_options so = {is_mlp ? 0.1f : 0.01f, 0.9f, 0.0f, is_mlp ? 0.0f : 1e-4f, 0};
    rc = opprof_nn_sgd_new(c->model, &so, &c->sgd);
    if (!rc && c->size > 1) opprof_nn_sgd_set_grad_hook(c->sgd, run_dist_grad_hook, NULL);
    return rc;
}

/* One inference or one training step. */
static int run_step(run_ctx *c)
{
    if (c->gpu) return run_cuda_step(c->gpu);
    if (c->train) {
        float loss;
        int rc = opprof_nn_train_step(c->model, c->sgd, c->x, c->targets, &loss);
        if (rc || c->step < 0) return rc;
        c->step++;
        /* Every rank takes part in both collectives; rank 0 speaks. */
        float mean = c->size > 1 ? run_dist_mean(loss) : loss;
        int same = c->size > 1 ? run_dist_same_weights(c->model) : 1;
        if (c->o->print_loss && c->rank == 0)
            fprintf(stderr, "step %ld: loss %.9g%s\n", c->step, (double)mean,
                    c->size > 1 ? (same ? ", weights identical on every rank" : ", WEIGHTS DIFFER") : "");
        if (!same) {
            fprintf(stderr, "opprof run: rank %d: the ranks' weights differ after step %ld\n", c->rank, c->step);
            return OPPROF_E_RANGE;
        }
        return OPPROF_OK;
    }
    opprof_nn_tensor *y = NULL;
    int rc = opprof_nn_model_forward(c->model, c->x, 0, &y);
    opprof_nn_tensor_release(y);
    return rc;
}

static void teardown(run_ctx *c)
{
    run_cuda_free(c->gpu);
    opprof_nn_sgd_free(c->sgd);
    opprof_nn_model_free(c->model);
    opprof_nn_tensor_release(c->x);
    free(c->targets);
}

/* ---- the run ---- */

static uint32_t activity_bits(const run_opts *o)
{
    const char *a = o->activities ? o->activities : !strcmp(o->device, "cuda") ? "cpu,cuda" : "cpu";
    return (strstr(a, "cpu") ? OPPROF_ACTIVITY_CPU : 0) | (strstr(a, "cuda") ? OPPROF_ACTIVITY_CUDA : 0);
}

/* PyTorch's memory units (torch.autograd.profiler_util._format_memory). */
static void format_memory(int64_t b, char *buf, size_t size)
{
    const double kb = 1024.0, mb = kb * 1024, gb = mb * 1024;
    double a = b < 0 ? -(double)b : (double)b;
    if (a >= gb)
        snprintf(buf, size, "%.2f Gb", (double)b / gb);
    else if (a >= mb)
        snprintf(buf, size, "%.2f Mb", (double)b / mb);
    else if (a >= kb)
        snprintf(buf, size, "%.2f Kb", (double)b / kb);
    else
        snprintf(buf, size, "%lld b", (long long)b);
}

/* The peak under the memory table: what the table's per-operator sums
 * cannot show. */
static int print_memory_peak(const opprof_trace *tr)
{
    opprof_memory_stats st;
    int rc = opprof_trace_memory_stats(tr, &st);
    if (rc) return rc;
    char peak[32], alloc[32], freed[32], live[32];
    format_memory(st.peak_bytes, peak, sizeof peak);
    format_memory(st.bytes_allocated, alloc, sizeof alloc);
    format_memory(st.bytes_freed, freed, sizeof freed);
    format_memory(st.final_bytes, live, sizeof live);
    printf("Peak CPU memory: %s at %.3fms in %s; allocated %s (%llu blocks), freed %s (%llu), live at the end %s\n",
           peak, (double)st.peak_time_ns / 1e6, st.peak_op ? st.peak_op : "[memory]", alloc,
           (unsigned long long)st.allocations, freed, (unsigned long long)st.frees, live);
    if (st.unknown_frees || st.double_frees)
        printf("Frees of unknown blocks: %llu, double frees: %llu\n", (unsigned long long)st.unknown_frees,
               (unsigned long long)st.double_frees);
    return OPPROF_OK;
}

/* --sample: under the table, the functions the top operators (by self
 * on-CPU time: the innermost ones) spend their samples in, by self time. */
static int print_hot_functions(const opprof_trace *tr, opprof_key_averages *ka)
{
    int rc = opprof_key_averages_sort(ka, "self_oncpu_time_total");
    for (size_t i = 0; rc == OPPROF_OK && i < opprof_key_averages_count(ka) && i < 5; i++) {
        opprof_avg_row r;
        int64_t on, self_on;
        if ((rc = opprof_key_averages_row(ka, i, &r)) || (rc = opprof_key_averages_oncpu(ka, i, &on, &self_on))) break;
        if (self_on <= 0) break;
        opprof_trace *fn = NULL;
        opprof_key_averages *fa = NULL;
        if ((rc = opprof_trace_functions(tr, NULL, r.name, &fn)) || (rc = opprof_key_averages(fn, NULL, &fa))) {
            opprof_trace_free(fn);
            break;
        }
        rc = opprof_key_averages_sort(fa, "self_cpu_time_total");
        printf("\n%s: on-CPU %.3f ms; where (self, samples inside it):\n", r.name, (double)on / 1e6);
        for (size_t k = 0; rc == OPPROF_OK && k < opprof_key_averages_count(fa) && k < 5; k++) {
            opprof_avg_row f;
            if ((rc = opprof_key_averages_row(fa, k, &f)) || f.self_cpu_time_total_ns <= 0) break;
            printf("  %6.1f%%  %s\n", 100.0 * (double)f.self_cpu_time_total_ns / (double)on, f.name);
        }
        opprof_key_averages_free(fa);
        opprof_trace_free(fn);
    }
    return rc;
}

static int print_table(const opprof_trace *tr, const run_opts *o)
{
    opprof_avg_options ao = {o->group_by_input_shape, (int)o->group_by_stack, 0};
    opprof_key_averages *ka = NULL;
    int rc = opprof_key_averages(tr, &ao, &ka);
    int table = !strcmp(o->format, "table");
    if (!rc && table && o->sample)
        rc = opprof_table_write_columns(ka, o->sort, (int)o->row_limit, OPPROF_COLUMNS_ONCPU, stdout);
    else if (!rc) rc = cli_write_key_averages(ka, o->format, o->sort, o->row_limit, stdout);
    if (!rc && table && o->sample) rc = print_hot_functions(tr, ka);
    if (!rc && table && o->memory) rc = print_memory_peak(tr);
    if (!rc && table) putchar('\n'); /* the blank line Python's print(table) leaves */
    opprof_key_averages_free(ka);
    fflush(stdout);
    return rc;
}

static int timeline_csv(FILE *f, void *tr)
{
    return opprof_memory_timeline_write(tr, f, OPPROF_FORMAT_CSV);
}

static int timeline_json(FILE *f, void *tr)
{
    return opprof_memory_timeline_write(tr, f, OPPROF_FORMAT_JSON);
}

/* Replaced atomically, as every file opprof writes. */
static int write_memory_timeline(const opprof_trace *tr, const char *path)
{
    size_t n = strlen(path);
    int json = n >= 5 && !strcmp(path + n - 5, ".json");
    return opprof_write_file(path, json ? timeline_json : timeline_csv, (void *)tr);
}

/* --report: the run's HTML report, with the options that produced it. */
static int write_report(const opprof_trace *tr, const run_opts *o, const char *model)
{
    char batch[24], size[24], steps[24], threads[24], seed[24];
    snprintf(batch, sizeof batch, "%ld", o->batch);
    snprintf(size, sizeof size, "%ld", o->image_size);
    snprintf(steps, sizeof steps, "%ld (after %ld warm-up)", o->steps, o->warmup);
    snprintf(threads, sizeof threads, "%d", opprof_nn_threads());
    snprintf(seed, sizeof seed, "%ld", o->seed);
    const char *config[] = {"command", "opprof run", "model", model, "batch", batch, "image size", size,
                            "steps", steps, "threads", threads, "seed", seed, NULL};
    opprof_report_options ro = {.title = "opprof run", .label_a = model, .config = config};
    int rc = opprof_report_write(tr, NULL, &ro, o->report);
    if (rc) fprintf(stderr, "opprof run: --report %s: %s\n", o->report, opprof_last_error());
    else fprintf(stderr, "opprof run: wrote %s\n", o->report);
    return rc;
}

/* What each ready trace becomes: the whole session's at stop, or each
 * schedule cycle's as it ends. */
typedef struct run_out {
    const run_opts *o;
    const char *model;
    int rank;                     /* --distributed: only rank 0 prints and writes single files */
    opprof_trace_handler handler; /* --trace-dir */
    unsigned traces;
    int rc;                       /* the first failure */
} run_out;

static void fail_out(run_out *out, int rc, const char *what)
{
    fprintf(stderr, "opprof run: %s: %s%s%s\n", what, opprof_strerror(rc), *opprof_last_error() ? ": " : "",
            opprof_last_error());
    if (!out->rc) out->rc = rc;
}

/* Which steps a cycle's trace holds, from its ProfilerStep#N ranges. */
static void print_steps(const opprof_trace *tr)
{
    long long lo = -1, hi = -1;
    for (size_t i = 0; i < opprof_trace_event_count(tr); i++) {
        opprof_event e;
        if (opprof_trace_event(tr, i, &e) || strncmp(e.name, "ProfilerStep#", 13)) continue;
        long long n = strtoll(e.name + 13, NULL, 10);
        if (lo < 0 || n < lo) lo = n;
        if (n > hi) hi = n;
    }
    if (lo >= 0) fprintf(stderr, "opprof run: the trace of steps %lld-%lld\n", lo, hi);
}

static void on_trace_ready(const opprof_trace *tr, void *user)
{
    run_out *out = user;
    const run_opts *o = out->o;
    int rc;
    out->traces++;
    if (o->trace_dir) {
        opprof_trace_handler_ready(tr, &out->handler); /* it prints its own failure */
        int status = opprof_trace_handler_status(&out->handler);
        if (status && !out->rc) out->rc = status;
        if (!status && out->rank == 0)
            fprintf(stderr, "opprof run: wrote %s%s\n", opprof_trace_handler_last_path(&out->handler),
                    o->distributed ? " (and the other ranks theirs)" : "");
    }
    if (out->rank != 0) return; /* rank 0 speaks for the job */
    if (o->schedule) print_steps(tr);
    if ((rc = print_table(tr, o))) fail_out(out, rc, "the table");
    /* A streamed trace is in its file already (its writer reports its own failures). */
    if (o->trace && !opprof_trace_streamed(tr) && (rc = opprof_export_chrome_trace(tr, o->trace)))
        fail_out(out, rc, o->trace);
    if (o->memory_timeline && (rc = write_memory_timeline(tr, o->memory_timeline))) fail_out(out, rc, o->memory_timeline);
    if (o->stacks_out && (rc = opprof_export_stacks(tr, o->stacks_out, o->stacks_metric)))
        fail_out(out, rc, o->stacks_out);
    if (o->report && (rc = write_report(tr, o, out->model)) && !out->rc) out->rc = rc; /* it says why */
    /* The model's operators are static sites: there is nothing to --exclude. */
    opprof_trace_drop_note(tr, "opprof run", "--max-events", NULL, stderr);
}

static int configure(const run_opts *o, run_out *out, opprof_config *cfg)
{
    opprof_config_init(cfg);
    cfg->record_shapes = o->shapes || o->group_by_input_shape;
    cfg->with_flops = o->flops;
    cfg->profile_memory = o->memory;
    cfg->with_stack = o->stack;
    cfg->max_events = (uint64_t)o->max_events; /* 0: the default */
    /* Only the table: sums by name instead of events (the library keeps
     * events anyway for the options that need them). --memory prints the
     * peak, which is read from the memory events. */
    cfg->aggregate = !o->trace && !o->trace_dir && !o->memory_timeline && !o->stacks_out && !o->report &&
                     !o->schedule && !o->distributed && !o->memory && !o->fl.ring && !o->sample;
    cfg->sample_hz = o->sample < 0 ? OPPROF_DEFAULT_SAMPLE_HZ : (unsigned)o->sample; /* on-CPU needs events */
    cfg->activities = activity_bits(o);
    /* Only the table and a trace (Chrome JSON or .pftrace): the trace
     * written as the passes run, in bounded memory, and the table from the
     * same records summed. */
    if (o->trace && !o->trace_dir && !o->memory_timeline && !o->stacks_out && !o->report &&
        !o->schedule && !o->distributed && !o->memory && !o->fl.ring && !o->max_events && !o->sample &&
        !(cfg->activities & OPPROF_ACTIVITY_CUDA))
        cfg->stream_trace = o->trace;
    cfg->on_trace_ready = on_trace_ready;
    cfg->user = out;
    if (o->schedule && opprof_schedule_parse(o->schedule, &cfg->schedule)) return OPPROF_E_PARSE;
    if (!o->trace_dir) return OPPROF_OK;
    char worker[64]; /* --distributed: each rank's files named after the run and the rank */
    snprintf(worker, sizeof worker, "%s_rank_%d", o->run_id, out->rank);
    return opprof_trace_handler_init(&out->handler, o->trace_dir, o->distributed ? worker : NULL, o->gzip);
}

/* The profiled passes; with a schedule each is a step (ProfilerStep#N). */
static int profile(run_ctx *c, const opprof_config *cfg)
{
    const run_opts *o = c->o;
    int flight = o->fl.ring > 0;
    int rc = flight ? run_flight_start(&o->fl, cfg, o->flight_file, o->trace_dir) : opprof_start(cfg);
    if (rc) return rc;
    if (o->sample && (rc = opprof_nn_sample_threads()) != OPPROF_OK) return rc;
    for (long i = 0; !rc && i < o->steps; i++) {
        rc = run_step(c);
        run_flight_delay(&o->fl, i);
        if (!rc && (o->schedule || flight)) rc = opprof_step();
    }
    if (c->size > 1) run_dist_clock_sync(); /* the session's end: the clocks' drift */
    if (flight) {
        c->flight_done = 1;
        int src = run_flight_stop();
        return rc ? rc : src;
    }
    int stop_rc = opprof_stop(NULL); /* the trace goes to on_trace_ready */
    return rc ? rc : stop_rc;
}

static int run_model(const run_opts *o, const model_spec *ms, int rank, int size)
{
    run_ctx c = {.o = o, .rank = rank, .size = size, .step = -1};
    run_out out = {.o = o, .model = ms->name, .rank = rank};
    opprof_config cfg;
    opprof_nn_set_threads((int)o->threads);
    int rc = configure(o, &out, &cfg);
    if (!rc) rc = setup(&c, ms);
    for (long i = 0; !rc && i < o->warmup; i++) rc = run_step(&c);
    c.step = 0;
    if (!rc && rank == 0) { /* rank 0 speaks for a distributed job */
        if (size > 1)
            fprintf(stderr, "opprof run: rank 0 of %d, each training on %ld of the batch\n", size, o->batch / size);
        if (c.gpu)
            fprintf(stderr, "opprof run: %s, batch %ld, %ld forward pass%s on %s\n", ms->name, o->batch, o->steps,
                    o->steps == 1 ? "" : "es", run_cuda_device(c.gpu));
        else
            fprintf(stderr, "opprof run: %s, batch %ld, %ld %s%s, %d thread%s\n", ms->name, o->batch, o->steps,
                    c.train ? "training step" : "forward pass", o->steps == 1 ? "" : c.train ? "s" : "es",
                    opprof_nn_threads(), opprof_nn_threads() == 1 ? "" : "s");
    }
    if (!rc) rc = profile(&c, &cfg);
    /* The library's detail; the model's operators give none, and refuse
     * only what check_args and check_batch_norm refuse first. */
    char why[300];
    const char *detail = rc && *opprof_last_error() ? opprof_last_error() : NULL;
    if (rc == OPPROF_E_INVAL) {
        snprintf(why, sizeof why, "an operator of the model refused its input at --batch %ld --image-size %ld, "
                 "which opprof run should have refused first: please report the command line", o->batch, o->image_size);
        detail = why;
    }
    if (rc && size > 1)
        fprintf(stderr, "opprof run: rank %d: %s: %s%s%s\n", rank, ms->name, opprof_strerror(rc), detail ? ": " : "",
                detail ? detail : "");
    else if (rc)
        fprintf(stderr, "opprof run: %s: %s%s%s\n", ms->name, opprof_strerror(rc), detail ? ": " : "",
                detail ? detail : "");
    else if (!out.traces && rank == 0 && !c.flight_done)
        fprintf(stderr, "opprof run: the schedule recorded nothing in %ld steps; give more --steps\n", o->steps);
    teardown(&c);
    opprof_nn_shutdown();
    return rc || out.rc ? CLI_FAIL : CLI_OK;
}

/* ResNet-18's last feature map for an image of px: conv1 and each of
 * maxpool, layer2, layer3 and layer4 halve it (rounding up). */
static long resnet_last_side(long px)
{
    for (int i = 0; i < 5; i++) px = (px + 1) / 2;
    return px;
}

/* Batch norm in training normalises each channel over the batch and the
 * feature map, so it needs more than one value per channel; PyTorch says
 * "Expected more than 1 value per channel when training". Said here, with
 * what to change, instead of the operator's bare "invalid argument".
 * Each of the ranks trains on batch / ranks; rank 0 speaks. */
static int check_batch_norm(const run_opts *o, const model_spec *ms, int rank, int ranks)
{
    long per_rank = o->batch / ranks, side = resnet_last_side(o->image_size);
    if (strcmp(ms->name, "resnet18-train") != 0 || per_rank * side * side >= 2) return CLI_OK;
    long px = o->image_size;
    while (resnet_last_side(px) * resnet_last_side(px) * per_rank < 2) px++;
    if (rank == 0)
        fprintf(stderr,
                "opprof run: resnet18-train: batch norm in training needs more than 1 value per channel, and layer4 "
                "sees %ldx%ld at --image-size %ld, with %ld image%s %s (PyTorch: \"Expected more than 1 value per "
                "channel when training\"); give --batch %ld or more, or --image-size %ld or more\n",
                side, side, o->image_size, per_rank, per_rank == 1 ? "" : "s", ranks > 1 ? "per rank" : "per batch",
                2L * ranks, px);
    return CLI_BAD_INPUT;
}

/* Checks what can be checked before the model runs: bad arguments exit 2. */
static int check_args(run_opts *o)
{
    opprof_schedule s;
    char why[600];
    if (o->schedule && opprof_schedule_parse(o->schedule, &s)) {
        snprintf(why, sizeof why, "--schedule %s: %s", o->schedule, opprof_last_error());
        return cli_bad_usage(&SPEC, why);
    }
    if (o->gzip && !o->trace_dir)
        return cli_bad_usage(&SPEC, "--gzip compresses the files of --trace-dir; give one (or --trace FILE.gz)");
    if (run_flight_parse(o->flight, o->slow_step, o->slow_range, o->flight_file, o->inject_delay, &o->fl) != 0) return CLI_BAD_INPUT;
    if (o->fl.ring && (o->schedule || o->distributed)) {
        fprintf(stderr, "opprof run: --flight records every step: not with --schedule or --distributed\n");
        return CLI_BAD_INPUT;
    }
    /* Each output checked before the model runs (the run keeps its own
     * folder, so the names stay as given). */
    const struct {
        const char *opt, *path;
    } outs[] = {{"--trace", o->trace}, {"--stacks", o->stacks_out}, {"--memory-timeline", o->memory_timeline},
                {"--report", o->report}};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        if (!outs[i].path) continue;
        char *abs = cli_check_output("run", outs[i].opt, outs[i].path, 0);
        if (!abs) return CLI_BAD_INPUT;
        free(abs);
    }
    o->memory |= o->memory_timeline != NULL;
    o->stack |= o->stacks_out != NULL || o->group_by_stack > 0;
    return CLI_OK;
}

int cmd_run(int argc, char **argv)
{
    run_opts o = {.batch = -1, .image_size = -1, .steps = -1, .warmup = 1, .sort = CLI_DEFAULT_SORT,
                  .format = "table", .device = "cpu", .row_limit = CLI_DEFAULT_ROW_LIMIT};
    const char *pos[1];
    int npos, p = cli_parse(&SPEC, argc, argv, &o, pos, &npos);
    if (p) return p > 0 ? CLI_OK : CLI_BAD_INPUT;
    o.model = pos[0];
    const model_spec *ms = NULL;
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++)
        if (!strcmp(MODELS[i].name, o.model)) ms = &MODELS[i];
    char why[200];
    if (!ms) {
        snprintf(why, sizeof why, "unknown model '%.64s' (resnet18, resnet18-train, mlp-train)", o.model);
        return cli_bad_usage(&SPEC, why);
    }
    if (!strcmp(o.device, "cuda") && strcmp(ms->name, "resnet18")) {
        snprintf(why, sizeof why, "--device cuda runs resnet18 (inference) only, not '%s'", ms->name);
        return cli_bad_usage(&SPEC, why);
    }
    if ((p = check_args(&o))) return p;
    if (o.batch < 0) o.batch = ms->batch;
    if (o.steps < 0) o.steps = ms->steps;
    if (o.image_size < 0) o.image_size = !strcmp(ms->name, "mlp-train") ? 64 : 224;
    if (!o.distributed) return check_batch_norm(&o, ms, 0, 1) ? CLI_BAD_INPUT : run_model(&o, ms, 0, 1);
    if (!ms->train || !strcmp(o.device, "cuda"))
        return cli_bad_usage(&SPEC, "--distributed trains: resnet18-train or mlp-train, on the CPU");
    int rank, size;
    if (run_dist_init(&rank, &size) != 0) return CLI_FAIL;
    run_dist_run_id(o.run_id, sizeof o.run_id);
    if (o.batch % size) {
        if (rank == 0) fprintf(stderr, "opprof run: --batch %ld is not a multiple of the %d ranks\n", o.batch, size);
        run_dist_finish();
        return CLI_BAD_INPUT;
    }
    if (check_batch_norm(&o, ms, rank, size) != CLI_OK) {
        run_dist_finish();
        return CLI_BAD_INPUT;
    }
    int rc = run_model(&o, ms, rank, size);
    run_dist_finish();
    return rc;
}
