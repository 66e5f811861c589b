C     The shuffle-exchange graph of 2**3 nodes (INCLUDE 'mpif.h', fixed
C     form): every node's neighbours are exchange (last bit flipped),
C     shuffle (bits rotated left) and unshuffle (rotated right). The
C     graph communicator must report them in that order; three
C     MPI_SENDRECV_REPLACE permutations then move one REAL per node.
      PROGRAM SHUFFLE
      INCLUDE 'mpif.h'
      INTEGER NB, NN
      PARAMETER (NB=3, NN=8)
      INTEGER IERR, RANK, NPROCS, COMM, I, K
      INTEGER INDEX(NN), EDGES(3*NN), NBRS(3), STATUS(MPI_STATUS_SIZE)
      INTEGER NNODES, NEDGES, CNT, TOPO
      INTEGER EXCH, SHUF, UNSH
      REAL A, WANT
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      IF (NPROCS .NE. NN) THEN
         PRINT *, 'shuffle: needs 8 ranks'
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END IF
      DO I = 0, NN - 1
         INDEX(I + 1) = 3 * (I + 1)
         EDGES(3 * I + 1) = EXCH(I)
         EDGES(3 * I + 2) = SHUF(I, NB)
         EDGES(3 * I + 3) = UNSH(I, NB)
      END DO
      CALL MPI_GRAPH_CREATE(MPI_COMM_WORLD, NN, INDEX, EDGES, .FALSE.,
     +     COMM, IERR)
      CALL MPI_TOPO_TEST(COMM, TOPO, IERR)
      CALL MPI_GRAPHDIMS_GET(COMM, NNODES, NEDGES, IERR)
      CALL MPI_COMM_RANK(COMM, RANK, IERR)
      CALL MPI_GRAPH_NEIGHBORS_COUNT(COMM, RANK, CNT, IERR)
      IF (TOPO .NE. MPI_GRAPH .OR. NNODES .NE. NN .OR.
     +    NEDGES .NE. 3 * NN .OR. CNT .NE. 3) THEN
         PRINT *, 'shuffle: bad graph', TOPO, NNODES, NEDGES, CNT
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END IF
      CALL MPI_GRAPH_NEIGHBORS(COMM, RANK, 3, NBRS, IERR)
      IF (NBRS(1) .NE. EXCH(RANK) .OR. NBRS(2) .NE. SHUF(RANK, NB)
     +    .OR. NBRS(3) .NE. UNSH(RANK, NB)) THEN
         PRINT *, 'shuffle: bad neighbours of', RANK, NBRS
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END IF
C     The table, in rank order.
      DO K = 0, NN - 1
         IF (K .EQ. RANK) THEN
            WRITE (*, '(A,I2,A,3I3)') 'node', RANK,
     +           ' exchange/shuffle/unshuffle', NBRS
            CALL FLUSH(6)
         END IF
         CALL MPI_BARRIER(COMM, IERR)
      END DO
      A = REAL(RANK)
C     exchange
      CALL MPI_SENDRECV_REPLACE(A, 1, MPI_REAL, NBRS(1), 0,
     +     NBRS(1), 0, COMM, STATUS, IERR)
      WANT = REAL(EXCH(RANK))
      IF (A .NE. WANT .OR. STATUS(MPI_SOURCE) .NE. NBRS(1)) GOTO 99
C     shuffle: send to the shuffle neighbour, receive from the unshuffle one
      CALL MPI_SENDRECV_REPLACE(A, 1, MPI_REAL, NBRS(2), 0,
     +     NBRS(3), 0, COMM, STATUS, IERR)
      WANT = REAL(EXCH(UNSH(RANK, NB)))
      IF (A .NE. WANT) GOTO 99
C     unshuffle: undoes the shuffle
      CALL MPI_SENDRECV_REPLACE(A, 1, MPI_REAL, NBRS(3), 0,
     +     NBRS(2), 0, COMM, MPI_STATUS_IGNORE, IERR)
      WANT = REAL(EXCH(RANK))
      IF (A .NE. WANT .OR. IERR .NE. MPI_SUCCESS) GOTO 99
      CALL MPI_COMM_FREE(COMM, IERR)
      IF (COMM .NE. MPI_COMM_NULL) GOTO 99
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) PRINT *, 'all checks passed on', NPROCS,
     +     'ranks'
      CALL MPI_FINALIZE(IERR)
      STOP
 99   PRINT *, 'shuffle: rank', RANK, 'has', A, 'wants', WANT
      CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END

      INTEGER FUNCTION EXCH(I)
      INTEGER I
      EXCH = IEOR(I, 1)
      END

      INTEGER FUNCTION SHUF(I, NB)
      INTEGER I, NB
      SHUF = IOR(IAND(ISHFT(I, 1), 2**NB - 1), ISHFT(I, 1 - NB))
      END

      INTEGER FUNCTION UNSH(I, NB)
      INTEGER I, NB
      UNSH = IOR(ISHFT(I, -1), ISHFT(IAND(I, 1), NB - 1))
      END
