/* The spool of a streamed trace (spool.h). Runs on the trace's writer
 * thread during the session, and on the stopping thread at its end. */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/spill.h"
#include "capture/thread.h"
#include "common/error.h"
#include "common/ownfd.h"
#include "common/quietthread.h"
#include "common/vec.h"
#include "common/writeall.h"
#include "export/spool.h"

/* Direct writes (O_DIRECT) go by whole blocks of this size, from and to
 * addresses and offsets it divides. */
#define SPOOL_ALIGN ((size_t)4096)

typedef struct ent {
    op_tstate *t;
    op_chunk *mem;      /* in memory: held for open ranges, or kept (no file) */
    int64_t off;        /* in the file; -1 while in memory */
    int direct;         /* written as a whole chunk, header included, by blocks */
    uint32_t nwords;
    uint32_t nopen;     /* held: records open at the last look */
    const op_word **open;
} ent;

struct op_spool {
    op_ownfd own;        /* the unnamed file, with its identity (common/ownfd.h) */
    int broken;          /* the file is not written any more */
    int direct;          /* the descriptor is O_DIRECT now */
    int want_direct;     /* op_spool_open's direct */
    void *bounce;        /* block-aligned room for direct writes of chunks that are not */
    size_t nbounce;
    uint64_t size;       /* where the next chunk goes */
    OP_VEC(ent) e;       /* in hand-off order */
    OP_VEC(uint32_t) held; /* entries held for open ranges */
    OP_VEC(const op_word *) scratch;
    op_spool_stats st;
    char error[320];
};

/* O_DIRECT on or off for the spool's descriptor (a file system that has no
 * direct I/O refuses it: the page cache then). 0 when it is as asked. */
static int set_direct(op_spool *s, int on)
{
#ifdef O_DIRECT
    int fl = fcntl(s->own.fd, F_GETFL);
    if (fl < 0) return -1;
    int want = on ? (fl | O_DIRECT) : (fl & ~O_DIRECT);
    if (want != fl && fcntl(s->own.fd, F_SETFL, want) != 0) return -1;
    s->direct = on;
    return 0;
#else
    (void)s;
    return on ? -1 : 0;
#endif
}

static int pread_all(int fd, void *p, size_t n, int64_t off)
{
    char *c = p;
    while (n) {
        ssize_t r = pread(fd, c, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

static size_t blocks(size_t n)
{
    return (n + SPOOL_ALIGN - 1) & ~(SPOOL_ALIGN - 1);
}

/* The bytes of chunk c from its start up to its data's end n, in whole
 * blocks, when they can go to the disk from where they are: a mapping of
 * its own (the pool's, a multiple of the page) on a block boundary. */
static int in_place(const op_chunk *c, size_t len)
{
    return !c->arena && ((uintptr_t)c & (SPOOL_ALIGN - 1)) == 0 &&
           len <= blocks(offsetof(op_chunk, words) + c->nwords * sizeof(op_word));
}

/* A direct write of entry e's chunk: whole blocks from the chunk's start
 * (the header goes too, and is ignored when read). -1 with errno. */
static int write_direct(op_spool *s, ent *e, size_t n)
{
    size_t len = blocks(offsetof(op_chunk, words) + n);
    const void *src = e->mem;
    if (!in_place(e->mem, len)) {
        if (len > s->nbounce) {
            free(s->bounce);
            s->nbounce = 0;
            if (posix_memalign(&s->bounce, SPOOL_ALIGN, len) != 0) {
                s->bounce = NULL;
                errno = ENOMEM;
                return -1;
            }
            s->nbounce = len;
        }
        memcpy((char *)s->bounce + offsetof(op_chunk, words), e->mem->words, n);
        src = s->bounce;
    }
    if (op_pwrite_all_fd(s->own.fd, src, len, (int64_t)s->size) != 0) return -1;
    e->off = (int64_t)s->size;
    e->direct = 1;
    s->size += len;
    return 0;
}

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

/* Written through the page cache, a run's records cost the kernel a fresh
 * page for each 4 KiB, and on a virtual machine whose memory the host backs
 * on first touch that took more CPU than the threads it shares the cores
 * with: bench_trace_cost's twothread_work, 742 MB of records, at the
 * start of a session on a VM just booted (a plain 1 GB dd there: 2.29 s of
 * system time through the cache, 0.10 s direct). Direct writes hand the
 * chunk itself to the disk. */
op_spool *op_spool_open(const char *near, int direct)
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
    s->want_direct = direct;
    (void)set_direct(s, direct);
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
        int ok = s->direct && write_direct(s, e, n) == 0;
        if (!ok && s->direct && errno != ENOSPC && errno != EDQUOT) {
            /* refused at the write (a file system that takes the flag and not
             * the I/O): the page cache from now on */
            (void)set_direct(s, 0);
        }
        if (!ok && !s->direct && op_pwrite_all_fd(s->own.fd, e->mem->words, n, (int64_t)s->size) == 0) {
            e->off = (int64_t)s->size;
            e->direct = 0;
            s->size += n;
            ok = 1;
        }
        if (ok) {
            s->st.direct += (uint64_t)e->direct;
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
        *e = (ent){t, c, -1, 0, (uint32_t)(end - c->words), 0, NULL};
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

/* Reads entry e's records into chunk c (as big or bigger): a direct read
 * of its blocks into c itself, whose header is kept, when both allow it;
 * else its records through the page cache. */
static int read_ent(op_spool *s, const ent *e, op_chunk *c)
{
    size_t n = (size_t)e->nwords * sizeof(op_word);
    size_t len = blocks(offsetof(op_chunk, words) + n);
    if (e->direct && s->direct && in_place(c, len)) {
        unsigned char head[offsetof(op_chunk, words)];
        memcpy(head, c, sizeof head);
        int rc = pread_all(s->own.fd, c, len, e->off);
        memcpy(c, head, sizeof head);
        if (rc == 0) return 0;
        if (set_direct(s, 0) != 0) return -1;
    }
    if (s->direct && set_direct(s, 0) != 0) return -1;
    return pread_all(s->own.fd, c->words, n, e->off + (e->direct ? (int64_t)offsetof(op_chunk, words) : 0));
}

/* The replay's read-ahead: a thread that reads the file's entries, in
 * order, up to AHEAD chunks before the one being decoded, so that the
 * disk's time (0.42 s of the end's 1.69 s for twothread_work's 742 MB,
 * with the decoding's core idle) overlaps the decoding. Entries in memory
 * (no offset) are the consumer's; the thread reads past them, and reads
 * only what the consumer does not write while it runs. */
#define AHEAD 4

typedef struct ahead {
    op_spool *s;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t read;  /* entries done by the thread: [0, read) */
    size_t taken; /* entries taken by the consumer */
    int stop;
    op_chunk *slot[AHEAD]; /* entry i's chunk at i % AHEAD; NULL: lost */
} ahead;

/* Entry e's records in a chunk of the pool's, end published; NULL when
 * none is left or the read failed. */
static op_chunk *read_chunk(op_spool *s, const ent *e)
{
    op_chunk *c = op_spill_chunk();
    if (c && (size_t)c->nwords >= e->nwords && read_ent(s, e, c) == 0) {
        atomic_store_explicit(&c->end, c->words + e->nwords, memory_order_release);
        return c;
    }
    if (c) op_spill_free(c);
    return NULL;
}

static void *ahead_main(void *arg)
{
    ahead *a = arg;
    op_thread_never_record();
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < a->s->e.n; i++) {
        while (!a->stop && i >= a->taken + AHEAD) pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop) break;
        pthread_mutex_unlock(&a->mu);
        const ent *e = &a->s->e.v[i];
        op_chunk *c = e->off < 0 ? NULL : read_chunk(a->s, e); /* in memory: e->mem, the consumer's */
        pthread_mutex_lock(&a->mu);
        a->slot[i % AHEAD] = c;
        a->read = i + 1;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Entry i's chunk from the read-ahead (the consumer's turn: i == taken). */
static op_chunk *ahead_take(ahead *a, size_t i)
{
    pthread_mutex_lock(&a->mu);
    while (a->read <= i) pthread_cond_wait(&a->cv, &a->mu);
    op_chunk *c = a->slot[i % AHEAD];
    a->slot[i % AHEAD] = NULL;
    a->taken = i + 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return c;
}

/* Stops the thread and frees what it read and nobody took. */
static void ahead_end(ahead *a)
{
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->th, NULL);
    for (size_t i = a->taken; i < a->read; i++) {
        if (a->slot[i % AHEAD]) op_spill_free(a->slot[i % AHEAD]);
        a->slot[i % AHEAD] = NULL;
    }
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
}

/* The read-ahead for s's entries; 0, or -1 when it could not start (the
 * caller then reads each entry itself). */
static int ahead_start(ahead *a, op_spool *s)
{
    memset(a, 0, sizeof *a);
    a->s = s;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (op_thread_start_quiet(&a->th, NULL, ahead_main, a) == 0) return 0;
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    return -1;
}

int op_spool_replay(op_spool *s, op_spool_fn fn, void *ctx, uint64_t *lost)
{
    int rc = 0;
    int readable = ours(s);
    ahead a;
    int ahead_on = readable && fn && s->st.chunks > 1 && ahead_start(&a, s) == 0;
    for (size_t i = 0; i < s->e.n; i++) {
        ent *e = &s->e.v[i];
        op_chunk *c = e->mem;
        e->mem = NULL;
        if (ahead_on && rc == 0) {
            op_chunk *r = ahead_take(&a, i); /* NULL for an entry in memory: the thread reads past it */
            if (!c) c = r;
        } else if (!c && rc == 0 && fn && readable) {
            c = read_chunk(s, e);
        }
        if (!c && e->off >= 0 && rc == 0 && fn) (*lost)++;
        if (!c) continue;
        if (rc == 0 && fn) rc = fn(ctx, e->t, c);
        else op_spill_free(c);
    }
    if (ahead_on) ahead_end(&a);
    for (size_t i = 0; i < s->e.n; i++) {
        free(s->e.v[i].open);
        s->e.v[i].open = NULL;
    }
    s->e.n = 0;
    s->held.n = 0;
    s->size = 0;
    if (readable && ftruncate(s->own.fd, 0) != 0) broke(s, "cannot empty the spool file", errno);
    if (readable && !s->broken && !s->direct) (void)set_direct(s, s->want_direct);
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
    free(s->bounce);
    free(s);
}
