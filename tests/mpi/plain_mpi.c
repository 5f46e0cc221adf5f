/* An MPI program that knows nothing of opprof: what LD_PRELOAD of
 * libopprof_mpi.so profiles, with the session the environment asks for. */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int x = 1, y = 0;
    for (int i = 0; i < 3; i++) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return y == 0;
}
