/* allreduce.c - the collective a synchronous round is measured against.
 *
 *     mpirun -np P allreduce DIM ROUNDS [blocking|nonblocking]
 *
 * Every rank contributes 8 + DIM doubles (aiarun's 64-byte header and its
 * payload) to an MPI_Allreduce of their sum, ROUNDS times; "nonblocking"
 * does the same with MPI_Iallreduce and MPI_Wait.  Before each round
 * every rank adds a little to its vector, so that no round repeats the
 * last.  Rank 0 prints one line: rounds=R time=SECONDS us_per_round=U,
 * from the first round's start to the last one's end.
 */
#include <config.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3 || (argc > 3 && strcmp(argv[3], "blocking") != 0 &&
                     strcmp(argv[3], "nonblocking") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: allreduce DIM ROUNDS "
                            "[blocking|nonblocking]\n");
        MPI_Finalize();
        return 2;
    }
    int n = 8 + atoi(argv[1]);
    long rounds = atol(argv[2]);
    int nonblocking = argc > 3 && strcmp(argv[3], "nonblocking") == 0;
    double *mine = malloc((size_t)n * sizeof *mine);
    double *sum = malloc((size_t)n * sizeof *sum);
    if (n < 9 || rounds < 1 || !mine || !sum) {
        if (rank == 0)
            fprintf(stderr, "allreduce: bad arguments or out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int j = 0; j < n; j++)
        mine[j] = rank + j * 1e-3;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    for (long r = 0; r < rounds; r++) {
        mine[r % n] += 1e-9;
        if (nonblocking) {
            MPI_Request req;
            MPI_Iallreduce(mine, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                           &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Allreduce(mine, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
    }
    double t = bench_now() - t0;
    if (rank == 0)
        printf("rounds=%ld time=%.6f us_per_round=%.3f check=%.6g\n", rounds,
               t, 1e6 * t / (double)rounds, sum[0]);
    free(mine);
    free(sum);
    MPI_Finalize();
    return 0;
}
