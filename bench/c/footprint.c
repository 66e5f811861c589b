/*
 * Memory footprint per rank (bench/startup.sh): after MPI_Init, and again after an
 * 8-byte MPI_Alltoall has touched every pair of ranks (the worst case for per-pair
 * buffers), each rank reads /proc/self/smaps and sums
 *   rss, pss      over all its mappings (pss: shared pages divided among their users),
 *   shm_size, shm_rss, shm_pss  over the mappings of shared files (/dev/shm, deleted
 *                 shared files, SysV segments): the shared-memory transport's segments.
 * Rank 0 prints one row per phase with the mean and the maximum over ranks (KiB):
 *   # ranks phase rss pss shm_size shm_rss shm_pss rss_max pss_max
 * Linux only (smaps); plain MPI-1 otherwise, builds against any MPI.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RSS, PSS, SHM_SIZE, SHM_RSS, SHM_PSS, NFIELDS };

/* A mapping counts as shared memory when it is a shared (s) mapping of a file under
 * /dev/shm, a deleted file (unlinked segments), a memfd or a SysV segment. */
static int shm_mapping(const char *line)
{
    char perms[8] = "";
    if (sscanf(line, "%*s %7s", perms) != 1 || perms[3] != 's')
        return 0;
    return strstr(line, "/dev/shm") || strstr(line, "(deleted)") || strstr(line, "memfd:") ||
           strstr(line, "SYSV");
}

static void measure(long long v[NFIELDS])
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in_shm = 0;
    memset(v, 0, sizeof(long long) * NFIELDS);
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        long long kb;
        unsigned long lo, hi;
        size_t tok = strcspn(line, " ");
        if (tok > 0 && line[tok - 1] != ':') { /* a mapping's header line, not "Field:" */
            in_shm = shm_mapping(line);
            if (in_shm && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
                v[SHM_SIZE] += (long long)(hi - lo) / 1024;
        } else if (sscanf(line, "Rss: %lld kB", &kb) == 1) {
            v[RSS] += kb;
            if (in_shm)
                v[SHM_RSS] += kb;
        } else if (sscanf(line, "Pss: %lld kB", &kb) == 1) {
            v[PSS] += kb;
            if (in_shm)
                v[SHM_PSS] += kb;
        }
    }
    fclose(f);
}

static void report(const char *phase, int rank, int size)
{
    long long v[NFIELDS], sum[NFIELDS], max[NFIELDS];
    measure(v);
    MPI_Reduce(v, sum, NFIELDS, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(v, max, NFIELDS, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d %s %lld %lld %lld %lld %lld %lld %lld\n", size, phase, sum[RSS] / size,
               sum[PSS] / size, sum[SHM_SIZE] / size, sum[SHM_RSS] / size, sum[SHM_PSS] / size,
               max[RSS], max[PSS]);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("# ranks phase rss pss shm_size shm_rss shm_pss rss_max pss_max (KiB, mean over ranks)\n");
    MPI_Barrier(MPI_COMM_WORLD);
    report("init", rank, size);
    char *s = calloc((size_t)size, 8), *r = calloc((size_t)size, 8);
    for (int i = 0; i < 3; i++)
        MPI_Alltoall(s, 8, MPI_BYTE, r, 8, MPI_BYTE, MPI_COMM_WORLD);
    report("alltoall", rank, size);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
