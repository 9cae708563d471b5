/* job.c: spellings of the job's enumerations and of the layout dimensions, shared by every module. */
#include "plc/job.h"

#define NAME_OF(table, v) ((unsigned)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : NULL)

const char *plc_schedule_name(plc_schedule s)
{
    static const char *const names[] = {"gpipe", "1f1b", "interleaved", "layered", "modular"};
    return NAME_OF(names, s);
}

const char *plc_recompute_name(plc_recompute r)
{
    static const char *const names[] = {"none", "selective", "full"};
    return NAME_OF(names, r);
}

const char *plc_attention_name(plc_attention a)
{
    static const char *const names[] = {"naive", "fused", "flash1", "flash2"};
    return NAME_OF(names, a);
}

const char *plc_precision_name(plc_precision p)
{
    static const char *const names[] = {"bf16", "fp32", "fp8"};
    return NAME_OF(names, p);
}

const char *plc_objective_name(plc_objective o)
{
    static const char *const names[] = {"time", "memory"};
    return NAME_OF(names, o);
}

const char *plc_layout_dim_key(plc_layout_dim d)
{
    static const char *const keys[PLC_LD_COUNT] = {
#define PLC_LAYOUT_KEY(name, type, kind, what) #name,
        PLC_LAYOUT_FIELDS(PLC_LAYOUT_KEY)
#undef PLC_LAYOUT_KEY
    };
    return (unsigned)d < PLC_LD_COUNT ? keys[d] : NULL;
}

plc_dim_kind plc_layout_dim_kind(plc_layout_dim d)
{
    static const plc_dim_kind kinds[PLC_LD_COUNT] = {
#define PLC_LAYOUT_KIND(name, type, kind, what) PLC_DIMK_##kind,
        PLC_LAYOUT_FIELDS(PLC_LAYOUT_KIND)
#undef PLC_LAYOUT_KIND
    };
    return (unsigned)d < PLC_LD_COUNT ? kinds[d] : PLC_DIMK_DEGREE;
}
