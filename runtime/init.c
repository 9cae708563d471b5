/* init.c: fills shards of global tensors from the counter-based generator. */
#include "runtime/init.h"

#include "runtime/rng.h"

void plc_init_range(float *dst, uint64_t seed, int64_t tensor_id, int64_t e0, int64_t n, double std,
                    plc_init_kind kind)
{
    if (kind == PLC_INIT_ONES || kind == PLC_INIT_ZEROS) {
        float v = kind == PLC_INIT_ONES ? 1.0f : 0.0f;
        for (int64_t i = 0; i < n; i++) dst[i] = v;
        return;
    }
    plc_rng_key k = {seed, (uint32_t)tensor_id, PLC_RNG_INIT};
    /* every element is independent of the others, so the loop splits freely */
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) dst[i] = (float)(std * plc_rng_normal(k, (uint64_t)(e0 + i)));
}

int plc_init_tensor(float *dst, uint64_t seed, int64_t tensor_id, const int64_t global_shape[2],
                    plc_shard s, double std, plc_init_kind kind)
{
    if (s.row0 < 0 || s.col0 < 0 || s.rows < 0 || s.cols < 0 || s.row0 > global_shape[0] - s.rows ||
        s.col0 > global_shape[1] - s.cols)
        return -1;
    for (int64_t r = 0; r < s.rows; r++)
        plc_init_range(dst + r * s.cols, seed, tensor_id, (s.row0 + r) * global_shape[1] + s.col0,
                       s.cols, std, kind);
    return 0;
}

int plc_init_model_tensor(float *dst, const plc_model *m, uint64_t seed, int64_t tensor_id,
                          plc_shard shard)
{
    plc_tensor_info t;
    if (!plc_tensor_get(m, tensor_id, &t)) return -1;
    return plc_init_tensor(dst, seed, tensor_id, t.shape, shard, t.init_std, t.init);
}
