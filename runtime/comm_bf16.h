/* comm_bf16.h: reductions of bf16 buffers over MPI.
 *
 * MPI has no bf16 type: bf16 travels as MPI_UINT16_T (send, receive,
 * gather and broadcast are plain 16-bit copies), and sums and maxima go
 * through the user-defined operations below. Each combines two bf16 values
 * the way NCCL's bf16 reductions do: widen both to fp32, add (or compare),
 * round the result to bf16 (nearest, ties to even) before it moves on.
 *
 * Determinism: the operations are exactly commutative (fp32 addition and
 * the rounding are), not associative, so a result depends on the order in
 * which MPI combines contributions. Open MPI picks its algorithm from the
 * communicator size and message size only and combines in the schedule's
 * fixed order, so the same plan gives the same bits run after run (tests/
 * e2e/train_bf16.sh checks it); a different layout may round differently. */
#ifndef PLC_RUNTIME_COMM_BF16_H
#define PLC_RUNTIME_COMM_BF16_H

#include <mpi.h>

/* MPI_User_function: inout[i] = bf16(f32(in[i]) + f32(inout[i])), len
 * elements of MPI_UINT16_T */
void plc_bf16_mpi_sum(void *in, void *inout, int *len, MPI_Datatype *type);
/* inout[i] = the larger of the two as numbers (a NaN wins, so it is seen) */
void plc_bf16_mpi_max(void *in, void *inout, int *len, MPI_Datatype *type);

/* creates both operations (MPI must be initialised); 0 or -1 */
int plc_bf16_mpi_ops_create(MPI_Op *sum, MPI_Op *max);
/* frees what was created (MPI_OP_NULL is left alone) */
void plc_bf16_mpi_ops_free(MPI_Op *sum, MPI_Op *max);

#endif
