/* The live CUPTI collector (see cupti.h).
 *
 * Activity buffers are decoded on CUPTI's own thread as they complete
 * (decoding is cheap, and the compact records take half the memory of
 * CUPTI's), so the program never waits for us; past a cap CUPTI gets no
 * buffer and counts what it drops. A launch belongs to the innermost range
 * of the calling thread open when its API call began (model/devmap.c): the
 * records are stamped with the session's clock, so that needs nothing on
 * the launching thread. Measured on an H200 (scripts/gpu-check.sh, ResNet-18
 * forward at batch 5, about 2 ms, host-bound): a callback on every launch
 * that pushed the open range as an external correlation, as Kineto pushes
 * the operator's id, cost 3-4% of the forward more, so callbacks are off
 * unless OPPROF_CUDA_CALLBACKS=1 asks for them. CUPTI records no runtime
 * query or bookkeeping call the model would drop, and of the driver API
 * only launches, copies and memsets, where it can select by call
 * (cuptiActivityEnableRuntimeApi/DriverApi). */
#ifdef OPPROF_HAVE_CUPTI
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/state.h"
#include "common/cudaapi.h"
#include "common/map.h"
#include "device/activity.h"
#include "device/cupti.h"
#include "device/cupti_decode.h"

/* The build's CUPTI: its soname and where it was found (CMake sets both). */
#ifndef OPPROF_CUPTI_SONAME
#define OPPROF_CUPTI_SONAME "libcupti.so"
#endif
#ifndef OPPROF_CUPTI_PATH
#define OPPROF_CUPTI_PATH "libcupti.so"
#endif

#define BUF_SIZE ((size_t)4 << 20)
#define MAX_BUFS 64                /* 256 MiB of CUPTI buffers in flight at most */
#define MAX_ACTS ((size_t)4 << 20) /* decoded records kept per generation */

typedef struct cuda_fns {
    CUresult (*init)(unsigned);
    CUresult (*device_count)(int *);
    CUresult (*error_string)(CUresult, const char **);
    CUresult (*ctx_current)(CUcontext *);
    CUresult (*ctx_sync)(void);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_name)(char *, int, CUdevice);
    CUresult (*device_mem)(size_t *, CUdevice);
    CUresult (*device_attr)(int *, CUdevice_attribute, CUdevice);
} cuda_fns;

typedef struct cupti_fns {
    CUptiResult (*get_version)(uint32_t *);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*set_thread_id_type)(CUpti_ActivityThreadIdType);
    CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc);
    CUptiResult (*timestamp)(uint64_t *);
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
    CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
    CUptiResult (*callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*push_ext)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*pop_ext)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*enable_driver_api)(CUpti_CallbackId, uint8_t);  /* optional */
    CUptiResult (*enable_runtime_api)(CUpti_CallbackId, uint8_t); /* optional */
} cupti_fns;

static struct {
    pthread_once_t once;
    int status; /* device count, or a negative status */
    char why[320];
    cuda_fns cu;
    cupti_fns pt;
    char *(*demangle)(const char *, char *, size_t *, int *);
    int set_up;   /* buffer callbacks registered, callback ids found */
    int sub_tried; /* the launch callbacks' subscriber asked for once */
    int tracing;  /* callbacks enabled */
    CUpti_SubscriberHandle sub;
    CUpti_CallbackId *cbids[2]; /* launch-like calls: runtime, driver */
    size_t ncbids[2];
    CUpti_CallbackId *noise;    /* runtime queries and bookkeeping, never recorded */
    size_t nnoise;
} L = {.once = PTHREAD_ONCE_INIT};

/* Decoded activity and the buffer pool, shared with CUPTI's thread. */
static struct {
    pthread_mutex_t lock;
    op_dev_batch batch;
    uint8_t *free_bufs[MAX_BUFS];
    unsigned nfree, nbufs;
} B = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- loading ---- */

static int load_fail(int status, const char *fmt, const char *a, const char *b)
{
    snprintf(L.why, sizeof L.why, fmt, a ? a : "", b ? b : "");
    return status;
}

#define SYM(h, field, name)                                                                        \
    do {                                                                                           \
        *(void **)(&(field)) = dlsym((h), (name));                                                 \
        if (!(field)) return load_fail(OPPROF_E_NODEV, "no CUDA device: %s lacks %s", lib, (name)); \
    } while (0)

static int load_cuda(void)
{
    const char *lib = "libcuda.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) return load_fail(OPPROF_E_NODEV, "no CUDA device: the NVIDIA driver is not installed (%s%s)", dlerror(), "");
    SYM(h, L.cu.init, "cuInit");
    SYM(h, L.cu.device_count, "cuDeviceGetCount");
    SYM(h, L.cu.error_string, "cuGetErrorString");
    SYM(h, L.cu.ctx_current, "cuCtxGetCurrent");
    SYM(h, L.cu.ctx_sync, "cuCtxSynchronize");
    SYM(h, L.cu.device_get, "cuDeviceGet");
    SYM(h, L.cu.device_name, "cuDeviceGetName");
    SYM(h, L.cu.device_mem, "cuDeviceTotalMem_v2");
    SYM(h, L.cu.device_attr, "cuDeviceGetAttribute");
    CUresult r = L.cu.init(0);
    if (r != CUDA_SUCCESS) {
        const char *s = NULL;
        L.cu.error_string(r, &s);
        return load_fail(OPPROF_E_NODEV, "no CUDA device: cuInit failed (%s)%s", s ? s : "unknown error", "");
    }
    int n = 0;
    if (L.cu.device_count(&n) != CUDA_SUCCESS || n <= 0)
        return load_fail(OPPROF_E_NODEV, "no CUDA device: the driver sees no device%s%s", "", "");
    return n;
}

static int load_cupti(void)
{
    const char *env = getenv("OPPROF_CUPTI_LIBRARY");
    const char *tries[] = {env, OPPROF_CUPTI_SONAME, "libcupti.so", OPPROF_CUPTI_PATH};
    void *h = NULL;
    const char *lib = NULL;
    for (size_t i = 0; i < sizeof tries / sizeof tries[0] && !h; i++)
        if (tries[i] && *tries[i]) h = dlopen(lib = tries[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) return load_fail(OPPROF_E_UNSUPPORTED, "CUDA activity unavailable: CUPTI could not be loaded (%s)%s",
                             dlerror(), "");
    SYM(h, L.pt.get_version, "cuptiGetVersion");
    uint32_t v = 0;
    L.pt.get_version(&v);
    /* Records are read with this build's struct layouts; newer CUPTI only
     * appends fields, older ones differ. */
    if (v < CUPTI_API_VERSION - CUPTI_API_VERSION % 10000) {
        char b1[32];
        snprintf(b1, sizeof b1, "%u", v);
        return load_fail(OPPROF_E_UNSUPPORTED, "CUDA activity unavailable: %s has API version %s, too old for this build",
                         lib, b1);
    }
    SYM(h, L.pt.register_callbacks, "cuptiActivityRegisterCallbacks");
    SYM(h, L.pt.enable, "cuptiActivityEnable");
    SYM(h, L.pt.disable, "cuptiActivityDisable");
    SYM(h, L.pt.flush_all, "cuptiActivityFlushAll");
    SYM(h, L.pt.next_record, "cuptiActivityGetNextRecord");
    SYM(h, L.pt.dropped, "cuptiActivityGetNumDroppedRecords");
    SYM(h, L.pt.set_thread_id_type, "cuptiSetThreadIdType");
    SYM(h, L.pt.timestamp, "cuptiGetTimestamp");
    SYM(h, L.pt.subscribe, "cuptiSubscribe");
    SYM(h, L.pt.enable_callback, "cuptiEnableCallback");
    SYM(h, L.pt.enable_domain, "cuptiEnableDomain");
    SYM(h, L.pt.callback_name, "cuptiGetCallbackName");
    SYM(h, L.pt.push_ext, "cuptiActivityPushExternalCorrelationId");
    SYM(h, L.pt.pop_ext, "cuptiActivityPopExternalCorrelationId");
    *(void **)&L.pt.register_timestamp = dlsym(h, "cuptiActivityRegisterTimestampCallback"); /* optional */
    *(void **)&L.pt.enable_driver_api = dlsym(h, "cuptiActivityEnableDriverApi");            /* optional */
    *(void **)&L.pt.enable_runtime_api = dlsym(h, "cuptiActivityEnableRuntimeApi");          /* optional */
    /* Kernel names are demangled by the C++ runtime's demangler. CUPTI 13
     * does not export it, and the program may not have loaded the C++
     * runtime: take it from libstdc++ (a name left mangled without it). */
    *(void **)&L.demangle = dlsym(h, "__cxa_demangle");
    if (!L.demangle) {
        void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (cxx) *(void **)&L.demangle = dlsym(cxx, "__cxa_demangle");
    }
    return 0;
}

static void load_once(void)
{
    int n = load_cuda();
    if (n > 0) {
        int rc = load_cupti();
        L.status = rc < 0 ? rc : n;
    } else {
        L.status = n;
    }
}

int op_cupti_load(const char **why)
{
    pthread_once(&L.once, load_once);
    if (why) *why = L.status > 0 ? NULL : L.why;
    return L.status;
}

/* ---- names ---- */

static pthread_mutex_t g_names_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *g_api_names[2][1024];

static const char *api_name(CUpti_CallbackDomain dom, uint32_t cbid, void *ctx)
{
    (void)ctx;
    int d = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? 0 : 1;
    if (cbid >= 1024) return NULL;
    pthread_mutex_lock(&g_names_lock);
    const char *n = g_api_names[d][cbid];
    if (!n) {
        const char *raw = NULL;
        char buf[256];
        if (L.pt.callback_name(dom, cbid, &raw) == CUPTI_SUCCESS && raw) {
            const opprof_site *s = opprof_intern(op_cupti_strip_version(raw, buf, sizeof buf), OPPROF_CAT_OTHER);
            n = g_api_names[d][cbid] = s ? s->name : NULL;
        }
    }
    pthread_mutex_unlock(&g_names_lock);
    return n;
}

/* Raw kernel name (interned: a stable key) -> demangled name. */
static op_map g_kn; /* kernel site -> its demangled name */

static const char *kernel_name(const char *raw, void *ctx)
{
    (void)ctx;
    if (!raw) return "";
    const opprof_site *key = opprof_intern(raw, OPPROF_CAT_KERNEL);
    if (!key) return NULL;
    if (!L.demangle || strncmp(raw, "_Z", 2) != 0) return key->name;
    pthread_mutex_lock(&g_names_lock);
    int added;
    uint64_t *v = op_map_at(&g_kn, (uint64_t)(uintptr_t)key, &added);
    if (!v) {
        pthread_mutex_unlock(&g_names_lock);
        return key->name;
    }
    if (added) {
        int st = -1;
        char *dm = L.demangle(raw, NULL, NULL, &st);
        const opprof_site *s = st == 0 && dm ? opprof_intern(dm, OPPROF_CAT_OTHER) : NULL;
        free(dm);
        *v = (uint64_t)(uintptr_t)(s ? s->name : key->name);
    }
    const char *name = (const char *)(uintptr_t)*v;
    pthread_mutex_unlock(&g_names_lock);
    return name;
}

/* ---- buffers (CUPTI's thread) ---- */

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint8_t *p = NULL;
    pthread_mutex_lock(&B.lock);
    if (B.nfree) {
        p = B.free_bufs[--B.nfree];
    } else if (B.nbufs < MAX_BUFS) {
        p = aligned_alloc(8, BUF_SIZE);
        if (p) B.nbufs++;
    }
    pthread_mutex_unlock(&B.lock);
    *buffer = p;
    *size = p ? BUF_SIZE : 0; /* none: CUPTI drops and counts */
    *max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    (void)size;
    op_cupti_decoder dec = {api_name, kernel_name, NULL};
    size_t dropped = 0;
    L.pt.dropped(ctx, stream, &dropped);
    pthread_mutex_lock(&B.lock);
    B.batch.dropped += dropped;
    CUpti_Activity *rec = NULL;
    while (buf && L.pt.next_record(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (B.batch.n >= MAX_ACTS || op_cupti_decode(&dec, rec, &B.batch) != 0) B.batch.dropped++;
    }
    if (buf) {
        if (B.nfree < MAX_BUFS) B.free_bufs[B.nfree++] = buf;
        else free(buf);
    }
    pthread_mutex_unlock(&B.lock);
}

/* ---- launch callbacks (the launching thread) ---- */

static _Thread_local uint64_t tl_pushed; /* bit k: level k pushed an id */
static _Thread_local uint32_t tl_level;

static void CUPTIAPI on_api(void *user, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
    (void)user;
    (void)dom;
    (void)cbid;
    const CUpti_CallbackData *cd = data;
    if (cd->callbackSite == CUPTI_API_ENTER) {
        int pushed = 0;
        uint64_t g = op_gen_load();
        op_tstate *t = op_tls;
        /* Past 64 nested calls (or enter/exit pairs split by a session's
         * start or stop) nothing is pushed, so nothing is left unpopped. */
        if (tl_level < 64 && g && t && t->gen == g) {
            for (uint32_t k = t->depth; k > 0; k--) {
                const op_word *rec = t->stack[k - 1].rec;
                if (!rec) continue; /* dropped under the cap: the next one out */
                pushed = L.pt.push_ext(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, rec[1]) == CUPTI_SUCCESS;
                break;
            }
        }
        if (tl_level < 64) tl_pushed = (tl_pushed & ~(1ull << tl_level)) | ((uint64_t)pushed << tl_level);
        tl_level++;
    } else if (tl_level) {
        tl_level--;
        uint64_t last;
        if (tl_level < 64 && (tl_pushed >> tl_level & 1)) L.pt.pop_ext(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    }
}

/* The launch-like callback ids of each domain (what the launch callbacks
 * watch, and the driver calls whose activity records are kept), and the
 * runtime calls never recorded. */
static void find_cbids(void)
{
    static const CUpti_CallbackDomain doms[2] = {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API};
    static const uint32_t sizes[2] = {CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_DRIVER_TRACE_CBID_SIZE};
    L.noise = calloc(sizes[0], sizeof *L.noise);
    for (int d = 0; d < 2; d++) {
        L.cbids[d] = calloc(sizes[d], sizeof *L.cbids[d]);
        if (!L.cbids[d]) continue;
        for (uint32_t id = 1; id < sizes[d]; id++) {
            const char *raw = NULL;
            char n[256];
            if (L.pt.callback_name(doms[d], id, &raw) != CUPTI_SUCCESS || !raw) continue;
            op_cupti_strip_version(raw, n, sizeof n);
            if (op_cuda_api_is_launch(d, n)) L.cbids[d][L.ncbids[d]++] = id;
            else if (d == 0 && L.noise && op_cuda_runtime_is_noise(n)) L.noise[L.nnoise++] = id;
        }
    }
}

static uint64_t CUPTIAPI mono_timestamp(void)
{
    return (uint64_t)op_mono_ns();
}

static const CUpti_ActivityKind g_kinds[] = {
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,
};

/* Settings for measuring what each part costs (scripts/gpu-check.sh):
 * OPPROF_CUDA_CALLBACKS=1 adds the launch callbacks (activity is otherwise
 * linked to operators by time), OPPROF_CUDA_NO_DRIVER=1 leaves driver API
 * records out, OPPROF_CUDA_ALL_DRIVER=1 records every driver call,
 * OPPROF_CUDA_ALL_RUNTIME=1 every runtime call (queries included),
 * OPPROF_CUDA_NO_RUNTIME=1 and OPPROF_CUDA_NO_KERNELS=1 leave runtime calls
 * or kernels out, OPPROF_CUDA_NO_TIMESTAMP=1 (read once, at the first
 * session) leaves CUPTI on its own clock. */
static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static int callbacks_wanted(void)
{
    return env_flag("OPPROF_CUDA_CALLBACKS");
}

/* Driver records of launches, copies and memsets only, where CUPTI selects
 * by call: 1 done, 0 not (every driver call is then recorded, or none). */
static int driver_launches(uint8_t on)
{
    if (!L.pt.enable_driver_api || !L.ncbids[1] || env_flag("OPPROF_CUDA_ALL_DRIVER")) return 0;
    for (size_t i = 0; i < L.ncbids[1]; i++)
        if (L.pt.enable_driver_api(L.cbids[1][i], on) != CUPTI_SUCCESS) return 0;
    return 1;
}

/* Runtime records without the queries and bookkeeping the model drops:
 * after KIND_RUNTIME is enabled (which resets the selection). */
static void runtime_noise(uint8_t recorded)
{
    if (!L.pt.enable_runtime_api || env_flag("OPPROF_CUDA_ALL_RUNTIME")) return;
    for (size_t i = 0; i < L.nnoise; i++) L.pt.enable_runtime_api(L.noise[i], recorded);
}

static int kind_wanted(CUpti_ActivityKind k)
{
    if (k == CUPTI_ACTIVITY_KIND_DRIVER) return !env_flag("OPPROF_CUDA_NO_DRIVER") && !driver_launches(1);
    if (k == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) return callbacks_wanted();
    if (k == CUPTI_ACTIVITY_KIND_RUNTIME) return !env_flag("OPPROF_CUDA_NO_RUNTIME");
    if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) return !env_flag("OPPROF_CUDA_NO_KERNELS");
    return 1;
}

int op_cupti_start(void)
{
    if (op_cupti_load(NULL) <= 0) return -1;
    if (!L.set_up) {
        /* CLOCK_MONOTONIC, as the session's timebase; must precede enabling. */
        if (L.pt.register_timestamp && !env_flag("OPPROF_CUDA_NO_TIMESTAMP")) L.pt.register_timestamp(mono_timestamp);
        L.pt.set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
        if (L.pt.register_callbacks(buf_requested, buf_completed) != CUPTI_SUCCESS) return -1;
        find_cbids();
        L.set_up = 1;
    }
    /* One subscriber per process: when another tool holds it, activity is
     * still recorded, linked to operators by time. */
    if (callbacks_wanted() && !L.sub_tried) {
        L.sub_tried = 1;
        if (L.pt.subscribe(&L.sub, (CUpti_CallbackFunc)on_api, NULL) != CUPTI_SUCCESS) L.sub = NULL;
    }
    pthread_mutex_lock(&B.lock);
    op_dev_batch_clear(&B.batch);
    pthread_mutex_unlock(&B.lock);
    for (size_t i = 0; i < sizeof g_kinds / sizeof g_kinds[0]; i++)
        if (kind_wanted(g_kinds[i]) && L.pt.enable(g_kinds[i]) != CUPTI_SUCCESS &&
            g_kinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            op_cupti_stop();
            return -1;
        }
    runtime_noise(0);
    if (L.sub && callbacks_wanted()) {
        static const CUpti_CallbackDomain doms[2] = {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API};
        for (int d = 0; d < 2; d++)
            for (size_t i = 0; i < L.ncbids[d]; i++) L.pt.enable_callback(1, L.sub, doms[d], L.cbids[d][i]);
        L.tracing = 1;
    }
    return 0;
}

/* ---- device properties ---- */

#define MAX_DEVICES 64
static op_dev_props g_props[MAX_DEVICES];
static uint8_t g_props_state[MAX_DEVICES]; /* 0 not asked, 1 known, 2 unavailable */

static int props_of(int ordinal, op_dev_props *p)
{
    CUdevice d;
    memset(p, 0, sizeof *p);
    p->id = ordinal;
    if (L.cu.device_get(&d, ordinal) != CUDA_SUCCESS || L.cu.device_name(p->name, sizeof p->name, d) != CUDA_SUCCESS)
        return -1;
    size_t mem = 0;
    L.cu.device_mem(&mem, d);
    p->total_global_mem = (int64_t)mem;
    static const struct {
        CUdevice_attribute a;
        size_t off;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(op_dev_props, compute_major)},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(op_dev_props, compute_minor)},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(op_dev_props, max_threads_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, offsetof(op_dev_props, max_threads_per_mp)},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, offsetof(op_dev_props, regs_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, offsetof(op_dev_props, regs_per_mp)},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, offsetof(op_dev_props, warp_size)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, offsetof(op_dev_props, shared_mem_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, offsetof(op_dev_props, shared_mem_per_mp)},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(op_dev_props, num_sms)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, offsetof(op_dev_props, shared_mem_per_block_optin)},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        L.cu.device_attr((int *)((char *)p + attrs[i].off), attrs[i].a, d);
    return 0;
}

/* The "deviceProperties" of the devices that have activity in b, as JSON
 * objects separated by ", "; *text NULL when none. */
static int device_props(const op_dev_batch *b, char **text_out, size_t *len_out)
{
    *text_out = NULL;
    *len_out = 0;
    uint64_t seen = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->acts[i].kind <= OP_DEV_MEMSET && b->acts[i].device < MAX_DEVICES) seen |= 1ull << b->acts[i].device;
    if (!seen) return 0;
    char *text = malloc((size_t)MAX_DEVICES * 1024);
    if (!text) return -1;
    size_t n = 0;
    for (int d = 0; d < MAX_DEVICES; d++) {
        if (!(seen >> d & 1)) continue;
        if (!g_props_state[d]) g_props_state[d] = props_of(d, &g_props[d]) == 0 ? 1 : 2;
        if (g_props_state[d] != 1) continue;
        if (n) text[n++] = ',', text[n++] = ' ';
        int len = op_dev_props_json(&g_props[d], text + n, 1000);
        if (len > 0) n += (size_t)len;
    }
    if (!n) {
        free(text);
        return 0;
    }
    *text_out = text;
    *len_out = n;
    return 0;
}

/* CUPTI's clock minus the monotonic clock, from the closest of a few paired reads. */
static int64_t cupti_minus_mono(void)
{
    int64_t best_gap = INT64_MAX, diff = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t c = 0;
        int64_t m0 = op_mono_ns();
        L.pt.timestamp(&c);
        int64_t m1 = op_mono_ns();
        if (m1 - m0 < best_gap) {
            best_gap = m1 - m0;
            diff = (int64_t)c - (m0 + (m1 - m0) / 2);
        }
    }
    return diff;
}

int op_cupti_take(op_dev_batch *out, int64_t *cupti_minus_mono_ns, char **props, size_t *props_len)
{
    /* Work still queued would be missing or incomplete: wait for it, as
     * PyTorch synchronizes before it stops. Only the caller's context can be
     * waited for. */
    CUcontext ctx = NULL;
    if (L.cu.ctx_current(&ctx) == CUDA_SUCCESS && ctx) L.cu.ctx_sync();
    L.pt.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    *cupti_minus_mono_ns = cupti_minus_mono();
    pthread_mutex_lock(&B.lock);
    *out = B.batch; /* the recording keeps what was recorded; the next one starts empty */
    memset(&B.batch, 0, sizeof B.batch);
    pthread_mutex_unlock(&B.lock);
    return device_props(out, props, props_len);
}

void op_cupti_stop(void)
{
    if (L.tracing) {
        L.pt.enable_domain(0, L.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
        L.pt.enable_domain(0, L.sub, CUPTI_CB_DOMAIN_DRIVER_API);
        L.tracing = 0;
    }
    for (size_t i = 0; i < sizeof g_kinds / sizeof g_kinds[0]; i++) L.pt.disable(g_kinds[i]);
    driver_launches(0);
    L.pt.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&B.lock);
    op_dev_batch_clear(&B.batch);
    pthread_mutex_unlock(&B.lock);
}

#else /* no CUPTI headers at build time */
#include <string.h>

#include "device/cupti.h"

int op_cupti_load(const char **why)
{
    if (why) *why = "no CUDA device: this opprof was built without CUDA (CUPTI headers not found)";
    return OPPROF_E_UNSUPPORTED;
}

int op_cupti_start(void)
{
    return -1;
}

int op_cupti_take(op_dev_batch *out, int64_t *cupti_minus_mono_ns, char **props, size_t *props_len)
{
    memset(out, 0, sizeof *out);
    *cupti_minus_mono_ns = 0;
    *props = NULL;
    *props_len = 0;
    return 0;
}

void op_cupti_stop(void)
{
}
#endif
