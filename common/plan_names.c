/* plan_names.c: spellings of the plan's enumerations (plc dump, plrun
 * messages, plc --help-ops). */
#include "plc/plan.h"

#define NAME_OF(table, v) ((unsigned)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : NULL)

const char *plc_op_name(plc_op op)
{
    static const char *const names[] = {
#define PLC_OP_NAME(name, operands) #name,
        PLC_OPS(PLC_OP_NAME)
#undef PLC_OP_NAME
    };
    return NAME_OF(names, op);
}

const char *plc_op_operands(plc_op op)
{
    static const char *const text[] = {
#define PLC_OP_TEXT(name, operands) operands,
        PLC_OPS(PLC_OP_TEXT)
#undef PLC_OP_TEXT
    };
    return NAME_OF(text, op);
}

const char *plc_dtype_name(plc_dtype t)
{
    static const char *const names[] = {"f32", "bf16", "i32", "f64"};
    return NAME_OF(names, t);
}

size_t plc_dtype_size(plc_dtype t)
{
    static const size_t sizes[] = {4, 2, 4, 8};
    return (unsigned)t < sizeof sizes / sizeof sizes[0] ? sizes[t] : 0;
}

const char *plc_buf_kind_name(plc_buf_kind k)
{
    static const char *const names[] = {"param", "grad", "adam_m", "adam_v", "master",
                                        "act",   "temp", "comm",   "data",   "scalar"};
    return NAME_OF(names, k);
}

const char *plc_phase_name(plc_phase p)
{
    static const char *const names[] = {"data", "fwd", "recompute", "bwd", "grad_sync", "optim"};
    return NAME_OF(names, p);
}
