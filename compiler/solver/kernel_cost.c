/* kernel_cost.c: what one kernel costs on the catalog's GPU: a GEMM by its
 * shape (the shape model of docs/solver.md, "GEMM efficiency") and a
 * memory-bound pass by its bytes. Below both the layer's time model
 * (time_model.c) and the experts' (moe_model.c), which call it. */
#include "compiler/solver/solver_int.h"

static double dim_eff(double d, double half) { return half > 0 ? d / (d + half) : 1.0; }

double plc_gemm_peak(const plc_hw *hw, plc_precision p)
{
    switch (p) {
    case PLC_PREC_FP32: return hw->flops_fp32;
    case PLC_PREC_FP8: return hw->flops_fp8;
    default: return hw->flops_bf16;
    }
}

/* The shape model (docs/solver.md, "GEMM efficiency"): a GEMM's output is
 * cut in tiles spread over the SMs, and each tile streams K through its
 * main loop after a fixed prologue and before an epilogue that writes the
 * tile to HBM. Too few tiles leave SMs idle (the area term: an output of
 * matmul_half_area elements runs at half rate); a short K spends as long in
 * the fixed part as in the loop at K = matmul_half_dim. The fixed part is
 * memory time and the loop compute time, so a faster precision (fp8) moves
 * the K half point up in proportion to its peak. */
double plc_matmul_efficiency(const plc_hw *hw, plc_precision p, int64_t M, int64_t N, int64_t K)
{
    double khalf = hw->matmul_half_dim;
    if (p == PLC_PREC_FP8 && hw->flops_bf16 > 0) khalf *= hw->flops_fp8 / hw->flops_bf16;
    return plc_share_or_one(hw->framework_eff) * plc_share_or_one(hw->matmul_eff) * dim_eff((double)K, khalf) *
           dim_eff((double)M * (double)N, hw->matmul_half_area);
}

double plc_cost_matmul(const plc_hw *hw, plc_precision p, int64_t M, int64_t N, int64_t K)
{
    if (M <= 0 || N <= 0 || K <= 0) return 0.0;
    return 2.0 * (double)M * (double)N * (double)K / (plc_gemm_peak(hw, p) * plc_matmul_efficiency(hw, p, M, N, K));
}

double plc_cost_memory_bound(const plc_hw *hw, double bytes)
{
    if (bytes <= 0) return 0.0;
    return bytes / (hw->hbm_bw * plc_share_or_one(hw->hbm_eff));
}
