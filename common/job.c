/* job.c: spellings of the job's enumerations and of the layout dimensions, shared by every module. */
#include "plc/job.h"

#include <stdio.h>

#define NAME_OF(table, v) ((unsigned)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : NULL)

const char *plc_schedule_name(plc_schedule s)
{
    static const char *const names[] = {"gpipe", "1f1b", "interleaved", "layered", "modular"};
    return NAME_OF(names, s);
}

const char *plc_recompute_name(plc_recompute r)
{
    static const char *const names[] = {"none", "selective", "full", "block", "every"};
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

const char *plc_engine_name(plc_engine e)
{
    static const char *const names[] = {"plrun", "megatron", "fsdp2"};
    return NAME_OF(names, e);
}

const char *plc_arch_name(plc_arch a)
{
    static const char *const names[] = {"llama", "gpt"};
    return NAME_OF(names, a);
}

const char *plc_positions_name(plc_positions p)
{
    static const char *const names[] = {"rope", "learned"};
    return NAME_OF(names, p);
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

const char *plc_layout_value_text(plc_layout_dim d, int64_t v, char *buf, size_t size)
{
    const char *name = NULL;
    switch (plc_layout_dim_kind(d)) {
    case PLC_DIMK_SCHEDULE: name = plc_schedule_name((plc_schedule)v); break;
    case PLC_DIMK_RECOMPUTE: name = plc_recompute_name((plc_recompute)v); break;
    case PLC_DIMK_ATTENTION: name = plc_attention_name((plc_attention)v); break;
    case PLC_DIMK_ONOFF: name = v ? "on" : "off"; break;
    case PLC_DIMK_DEGREE:
    case PLC_DIMK_LAYERS:
    case PLC_DIMK_ZERO: break;
    }
    if (name) snprintf(buf, size, "%s", name);
    else snprintf(buf, size, "%lld", (long long)v);
    return buf;
}

const char *plc_layout_text(const plc_layout *l, char *buf, size_t size)
{
    size_t n = 0;
    if (size) buf[0] = '\0';
    for (int d = 0; d < PLC_LD_COUNT && n < size; d++) {
        char v[32];
        int k = snprintf(buf + n, size - n, "%s%s=%s", d ? " " : "", plc_layout_dim_key((plc_layout_dim)d),
                         plc_layout_value_text((plc_layout_dim)d, plc_layout_get(l, (plc_layout_dim)d), v, sizeof v));
        if (k < 0) break;
        n += (size_t)k;
    }
    return buf;
}

const char *plc_recompute_text(const plc_layout *l, char *buf, size_t size)
{
    const char *name = plc_recompute_name(l->recompute);
    if (l->recompute == PLC_RECOMPUTE_BLOCK || l->recompute == PLC_RECOMPUTE_EVERY)
        snprintf(buf, size, "%s:%lld", name ? name : "?", (long long)l->recompute_layers);
    else
        snprintf(buf, size, "%s", name ? name : "?");
    return buf;
}
