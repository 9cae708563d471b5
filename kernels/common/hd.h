/* kernels/common/hd.h: how the shared element-wise helpers are declared.
 * Under nvcc they become __host__ __device__ so the CUDA kernels and the CPU
 * kernels (and so the CPU unit tests) run the very same math. */
#ifndef PLC_KERNELS_HD_H
#define PLC_KERNELS_HD_H

#ifdef __CUDACC__
#define PLC_HD static inline __host__ __device__
#else
#define PLC_HD static inline
#endif

#endif
