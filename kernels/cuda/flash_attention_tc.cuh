/* kernels/cuda/flash_attention_tc.cuh: the tensor-core flash attention
 * (flash_attention_tc.cu), which plc_cuda_flash_attention_forward and
 * _backward use where it applies: bf16, head dimension 64 or 128, every
 * tensor 16-byte aligned. Same arguments and results as those two. */
#ifndef PLC_KERNELS_CUDA_FLASH_ATTENTION_TC_CUH
#define PLC_KERNELS_CUDA_FLASH_ATTENTION_TC_CUH

#include <stdint.h>

#include "kernels/cuda/kernels_cuda.h"

extern "C" bool plc_cuda_flash_tc_applies(plc_cuda_dtype dt, int64_t hd, const void *const *ptrs, int n);
extern "C" int plc_cuda_flash_tc_forward(void *out, float *lse, const void *q, const void *k, const void *v,
                                         const int32_t *q_pos, const int32_t *k_pos, int64_t B, int64_t Tq,
                                         int64_t Tk, int64_t H, int64_t Hkv, int64_t hd, void *stream);
extern "C" int plc_cuda_flash_tc_backward(void *dq, void *dk, void *dv, const void *dout, const void *q,
                                          const void *k, const void *v, const void *out, const float *lse,
                                          const int32_t *q_pos, const int32_t *k_pos, int64_t B, int64_t Tq,
                                          int64_t Tk, int64_t H, int64_t Hkv, int64_t hd, void *stream);

#endif
