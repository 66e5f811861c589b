/* The shuffle-exchange example of the topology chapter: 2^n ranks in a graph
 * topology whose node a1..an has the neighbours exchange (an flipped),
 * shuffle (rotate left) and unshuffle (rotate right). Checks the neighbour
 * table MPI_Graph_neighbors returns against the book's table for n=3 and the
 * three MPI_Sendrecv_replace permutations. Needs 8 ranks. */
#include "../check.h"

static const int table[8][3] = {
    {1, 0, 0}, {0, 2, 4}, {3, 4, 1}, {2, 6, 5}, {5, 1, 2}, {4, 3, 6}, {7, 5, 3}, {6, 7, 7},
};

int main(int argc, char **argv) {
    int size, myrank, i, k;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size == 8);
    int index[8], edges[24];
    for (i = 0, k = 0; i < 8; i++) {
        int ex = i ^ 1, sh = ((i << 1) | (i >> 2)) & 7, un = ((i >> 1) | ((i & 1) << 2)) & 7;
        edges[k++] = ex; edges[k++] = sh; edges[k++] = un;
        index[i] = k;
    }
    MPI_Comm comm;
    OK(MPI_Graph_create(MPI_COMM_WORLD, 8, index, edges, 0, &comm));
    OK(MPI_Comm_rank(comm, &myrank));
    int status_type; OK(MPI_Topo_test(comm, &status_type)); CHECK(status_type == MPI_GRAPH);
    int nn; OK(MPI_Graph_neighbors_count(comm, myrank, &nn)); CHECK(nn == 3);
    for (int node = 0; node < 8; node++) {
        int nb[3];
        OK(MPI_Graph_neighbors(comm, node, 3, nb));
        for (i = 0; i < 3; i++) CHECK(nb[i] == table[node][i]);
    }
    int neighbors[3];
    MPI_Status status;
    OK(MPI_Graph_neighbors(comm, myrank, 3, neighbors));
    float A = 10.0f * myrank + 0.5f;
    /* exchange */
    OK(MPI_Sendrecv_replace(&A, 1, MPI_FLOAT, neighbors[0], 0, neighbors[0], 0, comm, &status));
    CHECK(A == 10.0f * table[myrank][0] + 0.5f);
    CHECK(status.MPI_SOURCE == neighbors[0]);
    float afterex = A;
    /* shuffle: send to the shuffle neighbour, receive from the unshuffle one */
    OK(MPI_Sendrecv_replace(&A, 1, MPI_FLOAT, neighbors[1], 0, neighbors[2], 0, comm, &status));
    CHECK(A == 10.0f * table[table[myrank][2]][0] + 0.5f);
    /* unshuffle undoes it */
    OK(MPI_Sendrecv_replace(&A, 1, MPI_FLOAT, neighbors[2], 0, neighbors[1], 0, comm, &status));
    CHECK(A == afterex);
    printf("node %d: %d,%d,%d\n", myrank, neighbors[0], neighbors[1], neighbors[2]);
    OK(MPI_Comm_free(&comm));
    OK(MPI_Finalize());
    return 0;
}
