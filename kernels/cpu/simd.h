/* kernels/cpu/simd.h: vector code for the element-wise loops of the CPU
 * kernels without -march flags. A function marked PLC_VECTOR_CLONES is
 * compiled for AVX-512, AVX2 and the baseline, and the loader picks the
 * widest the CPU runs (GCC's target_clones); its loops are `omp simd`.
 * Element-wise math gives the same bits in every clone and lane (no fused
 * multiply-adds under ISO C, kernels/common/expf.h), so the choice never
 * shows in a result. OpenMP's parallel regions are outlined into functions
 * that do not inherit the clones: a parallel loop calls a marked function
 * per chunk. */
#ifndef PLC_KERNELS_CPU_SIMD_H
#define PLC_KERNELS_CPU_SIMD_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PLC_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PLC_VECTOR_CLONES
#endif

/* The parallel loops of the kernels hand out their chunks, rows or blocks
 * dynamically (schedule(dynamic, ...)): what a chunk computes, and its
 * bits, is fixed by the sizes whichever thread runs it, and on a busy
 * machine a thread that wakes late finds the work done instead of holding
 * the others back for a share fixed in advance. */

/* elements per chunk of a parallel element-wise loop (a function of n only) */
#define PLC_EW_CHUNK 16384

#endif
