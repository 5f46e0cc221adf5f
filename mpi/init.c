/* MPI_Init and MPI_Finalize: the process's distributedInfo and its clock
 * measurements, and the session the environment asks for. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "opprof_mpi.h"

static opprof_distributed_info g_info;
static opprof_env g_env; /* outlives the session: cfg.user points to it */
static int g_own_session;

static void say(const char *what)
{
    fprintf(stderr, "opprof mpi: %s: %s\n", what, opprof_last_error());
}

static void setup(void)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (opmpi_comm_setup() != 0) say("cannot describe MPI_COMM_WORLD");
    opprof_distributed_info_init(&g_info);
    g_info.backend = "mpi";
    g_info.rank = rank;
    g_info.world_size = size;
    opmpi_clock_measure(&g_info.clock_start);
    opprof_set_distributed_info(&g_info);
    if (opprof_is_active()) return;
    opprof_config cfg;
    int rc = opprof_config_from_env(&cfg, &g_env);
    if (rc != OPPROF_OK) return; /* config_from_env has said why on stderr */
    if (!g_env.enabled) return;
    if (opprof_start(&cfg) != OPPROF_OK) {
        say("cannot start profiling");
        return;
    }
    g_own_session = 1;
}

int opprof_mpi_clock_sync(void)
{
    int up = 0, down = 0;
    PMPI_Initialized(&up);
    PMPI_Finalized(&down);
    if (!up || down) return OPPROF_E_NO_SESSION;
    if (opmpi_clock_measure(&g_info.clock_end) != 0) return OPPROF_E_IO;
    return opprof_set_distributed_info(&g_info);
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) setup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) setup();
    return rc;
}

int MPI_Finalize(void)
{
    opprof_mpi_clock_sync();
    if (g_own_session) {
        g_own_session = 0;
        /* on_trace_ready (the environment's handler) writes the trace. */
        if (opprof_stop(NULL) != OPPROF_OK) say("cannot stop profiling");
    }
    opmpi_comm_teardown();
    return PMPI_Finalize();
}
