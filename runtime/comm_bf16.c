/* comm_bf16.c: bf16 sum and max as MPI operations. See comm_bf16.h. */
#include "runtime/comm_bf16.h"

#include <stdint.h>

#include "kernels/common/bf16.h"

void plc_bf16_mpi_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < *len; i++) b[i] = plc_f32_to_bf16(plc_bf16_to_f32(a[i]) + plc_bf16_to_f32(b[i]));
}

void plc_bf16_mpi_max(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < *len; i++) {
        float x = plc_bf16_to_f32(a[i]), y = plc_bf16_to_f32(b[i]);
        if (x != x || x > y) b[i] = a[i]; /* x != x: x is a NaN */
    }
}

int plc_bf16_mpi_ops_create(MPI_Op *sum, MPI_Op *max)
{
    *sum = *max = MPI_OP_NULL;
    if (MPI_Op_create(plc_bf16_mpi_sum, 1, sum) != MPI_SUCCESS) return -1;
    if (MPI_Op_create(plc_bf16_mpi_max, 1, max) != MPI_SUCCESS) {
        MPI_Op_free(sum);
        *sum = MPI_OP_NULL;
        return -1;
    }
    return 0;
}

void plc_bf16_mpi_ops_free(MPI_Op *sum, MPI_Op *max)
{
    if (*sum != MPI_OP_NULL) MPI_Op_free(sum);
    if (*max != MPI_OP_NULL) MPI_Op_free(max);
    *sum = *max = MPI_OP_NULL;
}
