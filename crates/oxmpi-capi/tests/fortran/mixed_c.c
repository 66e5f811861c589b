/* The C half of mixed.f90: gets Fortran handles (MPI_Fint), converts them with
 * MPI_x_f2c, uses them, and hands new objects back with MPI_x_c2f. */
#include <mpi.h>

/* Sums `rank` over the Fortran communicator with the Fortran datatype (a
 * contiguous pair of MPI_INTEGER) and returns the sums; makes a duplicate of
 * the communicator named "from C" and returns its Fortran handle. */
int c_side(MPI_Fint *fcomm, MPI_Fint *ftype, int *out, MPI_Fint *fdup) {
    MPI_Comm comm = MPI_Comm_f2c(*fcomm);
    MPI_Datatype t = MPI_Type_f2c(*ftype);
    int rank, in[2], rc;
    if ((rc = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS) return rc;
    in[0] = rank;
    in[1] = 1;
    if ((rc = MPI_Allreduce(in, out, 1, t, MPI_SUM, comm)) != MPI_SUCCESS) return rc;
    MPI_Comm dup;
    if ((rc = MPI_Comm_dup(comm, &dup)) != MPI_SUCCESS) return rc;
    MPI_Comm_set_name(dup, "from C");
    *fdup = MPI_Comm_c2f(dup);
    return MPI_Comm_c2f(MPI_COMM_WORLD) == 0x101 ? MPI_SUCCESS : MPI_ERR_OTHER;
}

/* Attributes across the languages (the standard's interlanguage rules): C
 * reads an attribute Fortran stored as a pointer to its address-sized integer
 * value, and a pointer C stores reaches Fortran as its address. */
static int c_target = 7;
int c_attrs(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Aint *c_addr) {
    MPI_Comm comm = MPI_Comm_f2c(*fcomm);
    void *v;
    int flag, rc;
    if ((rc = MPI_Comm_get_attr(comm, *keyval, &v, &flag)) != MPI_SUCCESS) return rc;
    if (!flag || *(MPI_Aint *)v != 4242) return MPI_ERR_OTHER;
    if ((rc = MPI_Comm_set_attr(comm, *keyval, &c_target)) != MPI_SUCCESS) return rc;
    *c_addr = (MPI_Aint)&c_target;
    /* MPI_TAG_UB read from C is a pointer to the value. */
    int *ub;
    if ((rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag)) != MPI_SUCCESS) return rc;
    return flag && *ub >= 32767 ? MPI_SUCCESS : MPI_ERR_OTHER;
}
