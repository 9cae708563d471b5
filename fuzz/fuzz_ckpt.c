/* fuzz_ckpt.c: libFuzzer harness of the checkpoint loader: the safetensors
 * parser (runtime/safetensors.c), then the checks plrun makes before a
 * resume (runtime/ckpt_meta.c: format, version, the metadata's CRC, every
 * setting, the step), then every tensor's CRC and a typed read of it. Every
 * setting is allowed to differ, so that the comparison runs but never stops
 * the walk. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ckpt_meta.h"
#include "runtime/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *allow[64];
    static int nallow;
    static plc_plan plan; /* zero settings: every one differs, all allowed */
    char err[1024], val[PLC_CKPT_VALUE_MAX];
    if (!nallow)
        for (int i = 0; i < plc_ckpt_nsettings() && i < 64; i++)
            allow[nallow++] = plc_ckpt_setting_value(&plan, i, val, sizeof val);
    plc_st_file f;
    if (plc_st_parse(&f, data, size, err, sizeof err)) return 0;
    int64_t step;
    plc_ckpt_check_file(&f, &plan, "fuzz", allow, nallow, &step, err, sizeof err);
    for (size_t i = 0; i < f.n_tensors; i++) {
        const plc_st_tensor *t = &f.tensors[i];
        if (plc_ckpt_check_tensor(&f, t->name, "fuzz", err, sizeof err)) continue;
        size_t bytes = (size_t)(t->end - t->begin);
        void *dst = malloc(bytes ? bytes : 1);
        if (!dst) continue;
        plc_st_read(&f, t->name, t->dtype, t->ndim, t->shape, dst, err, sizeof err);
        free(dst);
    }
    plc_st_close(&f);
    return 0;
}
