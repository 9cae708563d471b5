/* job.c: spellings of the job's enumerations and of the layout dimensions, shared by every module. */
#include "plc/job.h"

#include <stdio.h>

/* the spellings, in enum order, each list ending in NULL (the front end
 * reads them as the choices of a key) */
const char *const plc_schedule_names[] = {"gpipe", "1f1b", "interleaved", "layered", "modular",
                                              "zb_h1", "zb_h2", "zb_v",        "dualpipe_v", NULL};
const char *const plc_recompute_names[] = {"none", "selective", "full", "block", "every", NULL};
const char *const plc_attention_names[] = {"naive", "fused", "flash1", "flash2", NULL};
const char *const plc_precision_names[] = {"bf16", "fp32", "fp8", NULL};
const char *const plc_objective_names[] = {"time", "memory", NULL};
const char *const plc_engine_names[] = {"plrun", "megatron", "fsdp2", "megatron_r0_8", NULL};
const char *const plc_arch_names[] = {"llama", "gpt", NULL};
const char *const plc_positions_names[] = {"rope", "learned", NULL};
const char *const plc_router_names[] = {"softmax", "sigmoid", NULL};

/* one name per enum value, and the NULL */
#define COUNT_OF(table) (sizeof(table) / sizeof(table[0]))
_Static_assert(COUNT_OF(plc_schedule_names) == PLC_SCHED_COUNT + 1, "a schedule without a name");
_Static_assert(COUNT_OF(plc_recompute_names) == PLC_RECOMPUTE_COUNT + 1, "a recompute policy without a name");
_Static_assert(COUNT_OF(plc_attention_names) == PLC_ATTN_COUNT + 1, "an attention form without a name");
_Static_assert(COUNT_OF(plc_precision_names) == PLC_PREC_COUNT + 1, "a precision without a name");
_Static_assert(COUNT_OF(plc_objective_names) == PLC_OBJ_COUNT + 1, "an objective without a name");
_Static_assert(COUNT_OF(plc_engine_names) == PLC_ENGINE_COUNT + 1, "an engine without a name");
_Static_assert(COUNT_OF(plc_arch_names) == PLC_ARCH_GPT + 2, "an architecture without a name");
_Static_assert(COUNT_OF(plc_positions_names) == PLC_POS_LEARNED + 2, "a position encoding without a name");
_Static_assert(COUNT_OF(plc_router_names) == PLC_ROUTER_SIGMOID + 2, "a router without a name");

#define NAME_OF(table, v) ((unsigned)(v) < COUNT_OF(table) - 1 ? table[v] : NULL)

const char *plc_schedule_name(plc_schedule s) { return NAME_OF(plc_schedule_names, s); }
const char *plc_recompute_name(plc_recompute r) { return NAME_OF(plc_recompute_names, r); }
const char *plc_attention_name(plc_attention a) { return NAME_OF(plc_attention_names, a); }
const char *plc_precision_name(plc_precision p) { return NAME_OF(plc_precision_names, p); }
const char *plc_objective_name(plc_objective o) { return NAME_OF(plc_objective_names, o); }
const char *plc_engine_name(plc_engine e) { return NAME_OF(plc_engine_names, e); }

const char *const plc_layout_dim_names[PLC_LD_COUNT] = {
#define PLC_LAYOUT_KEY(name, type, kind, what) #name,
    PLC_LAYOUT_FIELDS(PLC_LAYOUT_KEY)
#undef PLC_LAYOUT_KEY
};

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
    return (unsigned)d < PLC_LD_COUNT ? plc_layout_dim_names[d] : NULL;
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
        /* ep and etp where they are more than 1 (a dense model's texts do not change) */
        if (PLC_LAYOUT_MOE_DIM(d) && plc_layout_get(l, (plc_layout_dim)d) <= 1) continue;
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

int plc_model_plrun_heads(const plc_model *m, char *why, size_t size)
{
    bool own_width = m->head_dim > 0 && (m->heads < 1 || m->hidden % m->heads || m->head_dim != m->hidden / m->heads);
    if (!own_width && !m->qk_norm) return 0;
    if (own_width)
        snprintf(why, size, "head_dim = %lld with hidden / heads = %lld / %lld: plrun's lowering runs head_dim = "
                 "hidden / heads only", (long long)m->head_dim, (long long)m->hidden, (long long)m->heads);
    else
        snprintf(why, size, "qk_norm = on: plrun's lowering runs head_dim = hidden / heads only, without qk-norm");
    return -1;
}
