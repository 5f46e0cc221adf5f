/* Communicators as the trace names them. MPI_COMM_WORLD is described once
 * at MPI_Init; any other communicator at its first recorded use, kept as an
 * attribute so that MPI frees the description with the communicator.
 *
 * Names must agree across the members, with no communication: the world is
 * "0" (PyTorch's default group); another communicator is named after its
 * members' world ranks, with "#k" added for the k-th communicator with the
 * same members that this process used (the same on every member as long as
 * they first use such twins in the same order). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static opmpi_comm g_world;
static int g_world_ok;
static int g_keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* first uses, under MPI_THREAD_MULTIPLE */

/* Twins counted per member list: a few lists are enough for real programs. */
#define TWIN_SLOTS 64
static struct {
    const char *ranks;
    int count;
} g_twins[TWIN_SLOTS];

static int delete_attr(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    opmpi_comm *c = attr;
    free(c->world);
    free(c);
    return MPI_SUCCESS;
}

/* "[0, 1, 2]", interned: records keep the pointer past the communicator. */
static const char *ranks_text(const int *world, int n)
{
    size_t cap = 2 + (size_t)n * 13;
    char *s = malloc(cap);
    if (!s) return NULL;
    size_t k = 0;
    s[k++] = '[';
    for (int i = 0; i < n; i++) k += (size_t)snprintf(s + k, cap - k, "%s%d", i ? ", " : "", world[i]);
    snprintf(s + k, cap - k, "]");
    const opprof_site *site = opprof_intern(s, OPPROF_CAT_OTHER);
    free(s);
    return site ? site->name : NULL;
}

static const char *twin_name(const char *ranks)
{
    for (int i = 0; i < TWIN_SLOTS; i++) {
        if (g_twins[i].ranks == ranks || !g_twins[i].ranks) {
            g_twins[i].ranks = ranks;
            int k = g_twins[i].count++;
            if (k == 0) return ranks;
            char buf[64];
            snprintf(buf, sizeof buf, "%.40s#%d", ranks, k);
            const opprof_site *site = opprof_intern(buf, OPPROF_CAT_OTHER);
            return site ? site->name : ranks;
        }
    }
    return ranks;
}

static int describe(MPI_Comm comm, opmpi_comm *c)
{
    MPI_Group g, wg;
    PMPI_Comm_size(comm, &c->size);
    PMPI_Comm_rank(comm, &c->rank);
    c->world = malloc((size_t)c->size * sizeof *c->world);
    int *idx = malloc((size_t)c->size * sizeof *idx);
    if (!c->world || !idx) {
        free(idx);
        return -1;
    }
    for (int i = 0; i < c->size; i++) idx[i] = i;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, c->size, idx, wg, c->world);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    free(idx);
    c->ranks = ranks_text(c->world, c->size);
    return c->ranks ? 0 : -1;
}

int opmpi_comm_setup(void)
{
    memset(&g_world, 0, sizeof g_world);
    g_world_ok = describe(MPI_COMM_WORLD, &g_world) == 0;
    g_world.name = "0";
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attr, &g_keyval, NULL);
    return g_world_ok ? 0 : -1;
}

void opmpi_comm_teardown(void)
{
    g_world_ok = 0;
    free(g_world.world);
    g_world.world = NULL;
    if (g_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g_keyval);
}

opmpi_comm *opmpi_comm_get(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD) return g_world_ok ? &g_world : NULL;
    if (g_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return NULL;
    void *attr = NULL;
    int found = 0;
    PMPI_Comm_get_attr(comm, g_keyval, &attr, &found);
    if (found) return attr;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) return NULL;
    pthread_mutex_lock(&g_lock);
    PMPI_Comm_get_attr(comm, g_keyval, &attr, &found); /* another thread may have been first */
    opmpi_comm *c = found ? attr : calloc(1, sizeof *c);
    if (c && !found) {
        if (describe(comm, c) == 0) {
            c->name = twin_name(c->ranks);
            PMPI_Comm_set_attr(comm, g_keyval, c);
        } else {
            free(c->world);
            free(c);
            c = NULL;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return c;
}

const char *opmpi_dtype_name(MPI_Datatype t)
{
    if (t == MPI_DATATYPE_NULL) return ""; /* a barrier */
    if (t == MPI_FLOAT) return "Float";
    if (t == MPI_DOUBLE) return "Double";
    if (t == MPI_INT || t == MPI_INT32_T) return "Int";
    if (t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_INT64_T) return "Long";
    if (t == MPI_BYTE || t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T) return "Byte";
    if (t == MPI_CHAR || t == MPI_SIGNED_CHAR || t == MPI_INT8_T) return "Char";
    if (t == MPI_SHORT || t == MPI_INT16_T) return "Short";
    if (t == MPI_C_BOOL) return "Bool";
    if (t == MPI_UNSIGNED || t == MPI_UINT32_T) return "UInt32";
    if (t == MPI_UNSIGNED_LONG || t == MPI_UINT64_T || t == MPI_UNSIGNED_LONG_LONG) return "UInt64";
    if (t == MPI_LONG_DOUBLE) return "LongDouble";
    return "Other";
}

int64_t opmpi_type_size(MPI_Datatype t)
{
    int s = 0;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &s) != MPI_SUCCESS) return 0;
    return s;
}

void opmpi_input(opprof_input *in, MPI_Datatype t, int64_t count)
{
    int d = OPPROF_DTYPE_NONE;
    if (t == MPI_FLOAT) d = OPPROF_DTYPE_FLOAT;
    else if (t == MPI_DOUBLE) d = OPPROF_DTYPE_DOUBLE;
    else if (t == MPI_INT || t == MPI_INT32_T) d = OPPROF_DTYPE_INT32;
    else if (t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_INT64_T) d = OPPROF_DTYPE_INT64;
    else if (t == MPI_BYTE || t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T) d = OPPROF_DTYPE_UINT8;
    else if (t == MPI_CHAR || t == MPI_SIGNED_CHAR || t == MPI_INT8_T) d = OPPROF_DTYPE_INT8;
    else if (t == MPI_SHORT || t == MPI_INT16_T) d = OPPROF_DTYPE_INT16;
    else if (t == MPI_C_BOOL) d = OPPROF_DTYPE_BOOL;
    in->dtype = (uint8_t)d;
    in->ndim = 1;
    in->dims[0] = count;
}
