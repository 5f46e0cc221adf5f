/* The spool of a streamed trace (spool.h). Runs on the trace's writer
 * thread during the session, and on the stopping thread at its end. */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/spill.h"
#include "common/error.h"
#include "common/ownfd.h"
#include "common/vec.h"
#include "common/writeall.h"
#include "export/spool.h"

typedef struct ent {
    op_tstate *t;
    op_chunk *mem;      /* in memory: held for open ranges, or kept (no file) */
    int64_t off;        /* in the file; -1 while in memory */
    uint32_t nwords;
    uint32_t nopen;     /* held: records open at the last look */
    const op_word **open;
} ent;

struct op_spool {
    op_ownfd own;        /* the unnamed file, with its identity (common/ownfd.h) */
    int broken;          /* the file is not written any more */
    uint64_t size;       /* where the next chunk goes */
    OP_VEC(ent) e;       /* in hand-off order */
    OP_VEC(uint32_t) held; /* entries held for open ranges */
    OP_VEC(const op_word *) scratch;
    op_spool_stats st;
    char error[320];
};

static int tmp_in(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    char name[4200];
    if (snprintf(name, sizeof name, "%s/.opprof-spool-XXXXXX", dir) >= (int)sizeof name) return -1;
    fd = mkostemp(name, O_CLOEXEC);
    if (fd >= 0) unlink(name);
    return fd;
}

op_spool *op_spool_open(const char *near)
{
    op_spool *s = calloc(1, sizeof *s);
    if (!s) {
        op_fail(OPPROF_E_NOMEM, "out of memory opening the trace's spool");
        return NULL;
    }
    char dir[4096];
    const char *slash = near ? strrchr(near, '/') : NULL;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == near) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - near), near);
    int fd = tmp_in(dir);
    if (fd < 0) {
        const char *t = getenv("TMPDIR");
        fd = tmp_in(t && *t ? t : "/tmp");
    }
    if (fd < 0 || op_ownfd_set(&s->own, fd) != 0) {
        op_fail(OPPROF_E_IO, "cannot make the trace's spool file in %s or TMPDIR: %s", dir, strerror(errno));
        if (fd >= 0) close(fd);
        free(s);
        return NULL;
    }
    return s;
}

/* The descriptor is still our file: a program may close descriptors it
 * did not open and reuse the number for one of its own (an unnamed file's
 * inode number is free again the moment it is closed: ownfd.h). */
static int ours(const op_spool *s)
{
    return op_ownfd_ours(&s->own);
}

static void broke(op_spool *s, const char *why, int err)
{
    if (s->broken) return;
    s->broken = 1;
    snprintf(s->error, sizeof s->error, "%s%s%s", why, err ? ": " : "", err ? strerror(err) : "");
}

/* Writes entry e's chunk to the file and frees it; or, the file being
 * broken, keeps it in memory. */
static void write_out(op_spool *s, ent *e)
{
    if (!s->broken && !ours(s)) broke(s, "the program closed opprof's spool file", 0);
    if (!s->broken) {
        size_t n = (size_t)e->nwords * sizeof(op_word);
        if (op_write_all_fd(s->own.fd, e->mem->words, n, NULL) == 0) {
            e->off = (int64_t)s->size;
            s->size += n;
            s->st.bytes += n;
            s->st.chunks++;
            op_spill_free(e->mem);
            e->mem = NULL;
            return;
        }
        broke(s, "cannot write the spool file", errno);
        /* what a short write left is past s->size: overwritten by nothing, read by nothing */
    }
    s->st.kept++;
}

/* The records of c in [c->words, end) whose ranges are still open. */
static int scan_open(op_spool *s, const op_word *p, const op_word *end)
{
    s->scratch.n = 0;
    while (p < end) {
        size_t len = op_rec_len(p, end);
        if (!len) break;
        uint64_t w0 = OP_LOAD(&p[0]);
        if (w0 != OP_REC_MEM && w0 != OP_REC_GAP && __atomic_load_n(&p[2], __ATOMIC_ACQUIRE) == OP_OPEN &&
            op_vec_push(&s->scratch, p) != 0)
            return -1;
        p += len;
    }
    return 0;
}

/* Held entries whose ranges have all ended are written now. */
static void poll_held(op_spool *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->held.n; i++) {
        ent *e = &s->e.v[s->held.v[i]];
        while (e->nopen && __atomic_load_n(&e->open[e->nopen - 1][2], __ATOMIC_ACQUIRE) != OP_OPEN) e->nopen--;
        if (e->nopen) {
            s->held.v[k++] = s->held.v[i];
            continue;
        }
        free(e->open);
        e->open = NULL;
        write_out(s, e);
    }
    s->held.n = k;
}

void op_spool_put(op_spool *s, op_tstate *t, op_chunk *chunks)
{
    for (op_chunk *c = chunks; c;) {
        op_chunk *next = atomic_load_explicit(&c->next, memory_order_acquire);
        const op_word *end = atomic_load_explicit(&c->end, memory_order_acquire);
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
        if (!end) end = c->words;
        if (op_vec_reserve(&s->e, 1) != 0 || op_vec_reserve(&s->held, 1) != 0 ||
            scan_open(s, c->words, end) != 0) {
            /* no memory for its index: the chunk cannot be read back */
            broke(s, "out of memory indexing the spool", 0);
            s->st.lost++;
            op_spill_free(c);
            c = next;
            continue;
        }
        ent *e = &s->e.v[s->e.n++];
        *e = (ent){t, c, -1, (uint32_t)(end - c->words), 0, NULL};
        if (s->scratch.n) {
            /* Checked innermost first: the last open record ends first. */
            e->open = malloc(s->scratch.n * sizeof *e->open);
            if (e->open) {
                memcpy(e->open, s->scratch.v, s->scratch.n * sizeof *e->open);
                e->nopen = (uint32_t)s->scratch.n;
                s->held.v[s->held.n++] = (uint32_t)(s->e.n - 1);
                if (s->held.n > s->st.held_peak) s->st.held_peak = s->held.n;
            } else {
                s->st.kept++; /* stays in memory to the end */
            }
        } else {
            write_out(s, e);
        }
        c = next;
    }
    poll_held(s);
}

int op_spool_replay(op_spool *s, op_spool_fn fn, void *ctx, uint64_t *lost)
{
    int rc = 0;
    int readable = ours(s);
    for (size_t i = 0; i < s->e.n; i++) {
        ent *e = &s->e.v[i];
        op_chunk *c = e->mem;
        e->mem = NULL;
        free(e->open);
        e->open = NULL;
        if (!c && rc == 0 && fn) {
            c = readable ? op_spill_chunk() : NULL;
            size_t n = (size_t)e->nwords * sizeof(op_word);
            if (c && (size_t)c->nwords >= e->nwords && pread(s->own.fd, c->words, n, (off_t)e->off) == (ssize_t)n) {
                atomic_store_explicit(&c->end, c->words + e->nwords, memory_order_release);
            } else {
                if (c) op_spill_free(c);
                c = NULL;
                (*lost)++;
            }
        }
        if (!c) continue;
        if (rc == 0 && fn) rc = fn(ctx, e->t, c);
        else op_spill_free(c);
    }
    s->e.n = 0;
    s->held.n = 0;
    s->size = 0;
    if (readable && ftruncate(s->own.fd, 0) != 0) broke(s, "cannot empty the spool file", errno);
    return rc;
}

void op_spool_stats_get(const op_spool *s, op_spool_stats *st)
{
    *st = s->st;
    st->error = s->error;
}

void op_spool_free(op_spool *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->e.n; i++) {
        if (s->e.v[i].mem) op_spill_free(s->e.v[i].mem);
        free(s->e.v[i].open);
    }
    op_vec_free(&s->e);
    op_vec_free(&s->held);
    op_vec_free(&s->scratch);
    op_ownfd_close(&s->own);
    free(s);
}
