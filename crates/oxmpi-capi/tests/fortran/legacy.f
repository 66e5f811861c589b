C     INCLUDE 'mpif.h' programs' older habits, each found broken by
C     MPICH's own Fortran tests: MPI-1's INTEGER-address datatype
C     procedures, the removed *_INTEGER combiner names, a generalized
C     request's free function updating the caller's EXTRA_STATE,
C     MPI_INFO_GET / MPI_INFO_GET_STRING leaving VALUE alone,
C     INFO_CREATE_ENV
C     before MPI_INIT, and a window error handler freed by the program
C     while still attached.
      SUBROUTINE QFN(EXTRA, STATUS, IERR)
      INCLUDE 'mpif.h'
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA
      INTEGER STATUS(MPI_STATUS_SIZE), IERR
      CALL MPI_STATUS_SET_ELEMENTS(STATUS, MPI_BYTE, 0, IERR)
      CALL MPI_STATUS_SET_CANCELLED(STATUS, .FALSE., IERR)
      IERR = MPI_SUCCESS
      END
      SUBROUTINE FFN(EXTRA, IERR)
      INCLUDE 'mpif.h'
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA
      INTEGER IERR
      EXTRA = EXTRA - 1
      IERR = MPI_SUCCESS
      END
      SUBROUTINE CFN(EXTRA, COMPLETE, IERR)
      INCLUDE 'mpif.h'
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA
      LOGICAL COMPLETE
      INTEGER IERR
      IERR = MPI_SUCCESS
      END
      SUBROUTINE WEH(WIN, CODE)
      INTEGER WIN, CODE
      INTEGER NCALL, LAST
      COMMON /WEHC/ NCALL, LAST
      NCALL = NCALL + 1
      LAST = CODE
      END
      SUBROUTINE FAIL(WHAT, N)
      INCLUDE 'mpif.h'
      CHARACTER*(*) WHAT
      INTEGER N, IERR
      PRINT *, 'legacy: ', WHAT, N
      CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END
      PROGRAM LEGACY
      INCLUDE 'mpif.h'
      EXTERNAL QFN, FFN, CFN, WEH
      INTEGER IERR, RANK, NP, I, ISZ, T1, T2, T3, POS, PSIZE
      INTEGER DISPL(4), BLENS(4), TYPES(4), EXT, LB, UB
      INTEGER IN(4), OUT(4), PACKED(16)
      INTEGER NI, NA, ND, COMB, REQ, INFO, ENV, BUFL
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA, WSIZE
      INTEGER STATUS(MPI_STATUS_SIZE), WIN, EH, Q, WBUF(4)
      INTEGER NCALL, LAST, MAXP0
      COMMON /WEHC/ NCALL, LAST
      CHARACTER*(40) VAL
      LOGICAL FLAG
C     MPI_INFO_CREATE_ENV works before MPI_INIT, with the same keys.
      CALL MPI_INFO_CREATE_ENV(ENV, IERR)
      BUFL = 40
      CALL MPI_INFO_GET_STRING(ENV, 'maxprocs', BUFL, VAL, FLAG, IERR)
      IF (.NOT. FLAG) CALL FAIL('no maxprocs before MPI_INIT', 0)
      READ (VAL(1:BUFL), *) MAXP0
      CALL MPI_INFO_FREE(ENV, IERR)
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      IF (MAXP0 .NE. NP) CALL FAIL('maxprocs before MPI_INIT', MAXP0)
      CALL MPI_TYPE_SIZE(MPI_INTEGER, ISZ, IERR)
C     MPI_TYPE_HINDEXED: INTEGER displacements, here in reverse order.
      DO I = 1, 4
         DISPL(I) = (4 - I) * ISZ
         BLENS(I) = 1
         IN(I) = 10 * I
         OUT(I) = -1
      END DO
      CALL MPI_TYPE_HINDEXED(4, BLENS, DISPL, MPI_INTEGER, T1, IERR)
      IF (IERR .NE. MPI_SUCCESS) CALL FAIL('TYPE_HINDEXED', IERR)
      CALL MPI_TYPE_COMMIT(T1, IERR)
      CALL MPI_PACK_SIZE(1, T1, MPI_COMM_WORLD, PSIZE, IERR)
      IF (PSIZE .NE. 4 * ISZ) CALL FAIL('pack size', PSIZE)
      POS = 0
      CALL MPI_PACK(IN, 1, T1, PACKED, 16 * ISZ, POS, MPI_COMM_WORLD,
     +     IERR)
      POS = 0
      CALL MPI_UNPACK(PACKED, 16 * ISZ, POS, OUT, 4, MPI_INTEGER,
     +     MPI_COMM_WORLD, IERR)
      DO I = 1, 4
         IF (OUT(I) .NE. 10 * (5 - I)) CALL FAIL('hindexed order', I)
      END DO
C     MPI_TYPE_EXTENT / LB / UB answer in default INTEGERs.
      CALL MPI_TYPE_EXTENT(T1, EXT, IERR)
      CALL MPI_TYPE_LB(T1, LB, IERR)
      CALL MPI_TYPE_UB(T1, UB, IERR)
      IF (EXT .NE. 4 * ISZ .OR. LB .NE. 0 .OR. UB .NE. 4 * ISZ)
     +     CALL FAIL('extent/lb/ub', EXT)
C     MPI_TYPE_HVECTOR: an INTEGER stride in bytes.
      CALL MPI_TYPE_HVECTOR(2, 1, 3 * ISZ, MPI_INTEGER, T2, IERR)
      CALL MPI_TYPE_EXTENT(T2, EXT, IERR)
      IF (EXT .NE. 4 * ISZ) CALL FAIL('hvector extent', EXT)
      CALL MPI_TYPE_GET_ENVELOPE(T2, NI, NA, ND, COMB, IERR)
      IF (COMB .NE. MPI_COMBINER_HVECTOR) CALL FAIL('combiner', COMB)
C     The removed combiner names exist and differ from the others.
      IF (MPI_COMBINER_HVECTOR_INTEGER .EQ. MPI_COMBINER_HVECTOR .OR.
     +    MPI_COMBINER_HINDEXED_INTEGER .EQ. MPI_COMBINER_HINDEXED .OR.
     +    MPI_COMBINER_STRUCT_INTEGER .EQ. MPI_COMBINER_STRUCT)
     +     CALL FAIL('*_INTEGER combiners', 0)
C     MPI_TYPE_STRUCT: INTEGER displacements.
      TYPES(1) = MPI_INTEGER
      TYPES(2) = MPI_DOUBLE_PRECISION
      DISPL(1) = 0
      DISPL(2) = 8
      BLENS(1) = 1
      BLENS(2) = 1
      CALL MPI_TYPE_STRUCT(2, BLENS, DISPL, TYPES, T3, IERR)
      CALL MPI_TYPE_EXTENT(T3, EXT, IERR)
      IF (EXT .NE. 16) CALL FAIL('struct extent', EXT)
      CALL MPI_TYPE_FREE(T1, IERR)
      CALL MPI_TYPE_FREE(T2, IERR)
      CALL MPI_TYPE_FREE(T3, IERR)
C     A generalized request's free function sees the caller's variable.
      EXTRA = 1
      CALL MPI_GREQUEST_START(QFN, FFN, CFN, EXTRA, REQ, IERR)
      CALL MPI_GREQUEST_COMPLETE(REQ, IERR)
      CALL MPI_WAIT(REQ, STATUS, IERR)
      IF (EXTRA .NE. 0) CALL FAIL('free_fn did not update', INT(EXTRA))
C     MPI_INFO_GET of an absent key and MPI_INFO_GET_STRING with
C     BUFLEN = 0 leave VALUE as it was.
      CALL MPI_INFO_CREATE(INFO, IERR)
      CALL MPI_INFO_SET(INFO, 'key', 'abcdef', IERR)
      VAL = 'canary'
      CALL MPI_INFO_GET(INFO, 'nokey', 40, VAL, FLAG, IERR)
      IF (FLAG .OR. VAL .NE. 'canary') CALL FAIL('INFO_GET absent', 0)
      BUFL = 0
      CALL MPI_INFO_GET_STRING(INFO, 'key', BUFL, VAL, FLAG, IERR)
      IF (.NOT. FLAG .OR. BUFL .NE. 6 .OR. VAL .NE. 'canary')
     +     CALL FAIL('INFO_GET_STRING buflen 0', BUFL)
      BUFL = 3
      CALL MPI_INFO_GET_STRING(INFO, 'key', BUFL, VAL, FLAG, IERR)
      IF (BUFL .NE. 6 .OR. VAL .NE. 'abc')
     +     CALL FAIL('INFO_GET_STRING buflen 3', BUFL)
      CALL MPI_INFO_FREE(INFO, IERR)
C     A window error handler stays in force after the program frees
C     both its handles (MPI_WIN_GET_ERRHANDLER's and its own).
      NCALL = 0
      WSIZE = 4 * ISZ
      CALL MPI_WIN_CREATE_ERRHANDLER(WEH, EH, IERR)
      CALL MPI_WIN_CREATE(WBUF, WSIZE, ISZ, MPI_INFO_NULL,
     +     MPI_COMM_WORLD, WIN, IERR)
      CALL MPI_WIN_SET_ERRHANDLER(WIN, EH, IERR)
      CALL MPI_WIN_GET_ERRHANDLER(WIN, Q, IERR)
      IF (Q .NE. EH) CALL FAIL('WIN_GET_ERRHANDLER', Q)
      CALL MPI_ERRHANDLER_FREE(Q, IERR)
      CALL MPI_ERRHANDLER_FREE(EH, IERR)
      IF (IERR .NE. MPI_SUCCESS) CALL FAIL('ERRHANDLER_FREE', IERR)
      CALL MPI_WIN_CALL_ERRHANDLER(WIN, MPI_ERR_OTHER, IERR)
      CALL MPI_WIN_CALL_ERRHANDLER(WIN, MPI_ERR_ARG, IERR)
      IF (NCALL .NE. 2 .OR. LAST .NE. MPI_ERR_ARG)
     +     CALL FAIL('window handler calls', NCALL)
      CALL MPI_WIN_FREE(WIN, IERR)
      IF (RANK .EQ. 0) PRINT *, 'all checks passed on', NP, 'ranks'
      CALL MPI_FINALIZE(IERR)
      END
