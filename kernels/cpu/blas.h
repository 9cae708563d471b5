/* kernels/cpu/blas.h: how the CPU kernels call OpenBLAS. Always
 * single-threaded: the kernels' OpenMP threads take whole panels or tiles,
 * each one OpenBLAS call whose shapes do not depend on the thread count, so
 * neither do the results (docs/runtime.md, Determinism). Call
 * plc_blas_one_thread() before a parallel region that calls OpenBLAS, from
 * one thread. A pthread-built OpenBLAS (Debian's libopenblas0-pthread) is
 * safe to call from several threads at once: it locks its table of packing
 * buffers (driver/others/memory.c), and at one thread a call runs wholly on
 * the calling thread. */
#ifndef PLC_KERNELS_CPU_BLAS_H
#define PLC_KERNELS_CPU_BLAS_H

#include <cblas.h>

static inline void plc_blas_one_thread(void)
{
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

#endif
