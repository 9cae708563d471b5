/* kernels/cuda/step_scalars.cu: the step's scalars kept on the device, so
 * that no op of a step stops for the host and the whole stretch can be a
 * CUDA graph (runtime/step_graph.h): the loss sum over a micro-batch's rows,
 * the squared-norm accumulation and the clip factor.
 *
 * Each is one thread doing, in the same order, the double arithmetic the
 * CPU backend does on the host (runtime/backend_cpu.c): float row losses
 * widened and added to the loss sum in row order; a parameter's partial
 * sum added to the norm's; sqrt, compare, divide, narrow. IEEE double
 * add, sqrt and divide round the same on the device as on the host, and
 * single adds leave nothing for the compiler to contract, so the bits are
 * the host's. The loop over the rows is serial on purpose (the order is the
 * contract): some 30 thousand adds a micro-batch, well under a millisecond. */
#include "kernels/cuda/cuda_common.cuh"

__global__ void sum_rows_k(double *acc, const float *x, int64_t n)
{
    double a = *acc;
    for (int64_t r = 0; r < n; r++) a += (double)x[r];
    *acc = a;
}

__global__ void add_f64_k(double *acc, const double *x) { *acc = *acc + *x; }

__global__ void clip_scale_k(float *scale, const double *sumsq, double max_norm)
{
    double norm = sqrt(*sumsq);
    *scale = max_norm > 0 && norm > max_norm ? (float)(max_norm / norm) : 1.0f;
}

extern "C" int plc_cuda_sum_rows_f64(double *acc, const float *x, int64_t n, void *stream)
{
    if (n <= 0) return 0;
    sum_rows_k<<<1, 1, 0, plc_stream(stream)>>>(acc, x, n);
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_add_f64(double *acc, const double *x, void *stream)
{
    add_f64_k<<<1, 1, 0, plc_stream(stream)>>>(acc, x);
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_clip_scale(float *scale, const double *sumsq, double max_norm, void *stream)
{
    clip_scale_k<<<1, 1, 0, plc_stream(stream)>>>(scale, sumsq, max_norm);
    return plc_cuda_check_launch(__func__);
}
