/* report_nofit.c: "no layout fits": the closest candidates, and what would
 * make the closest one fit, found by re-estimating variants of it (more
 * recompute, a higher ZeRO stage, smaller micro-batches, a leaner attention
 * kernel, shorter sequences) and by solving again on larger clusters. */
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "compiler/plantools/plantools.h"

typedef struct variant {
    const char *what;
    plc_job job;
    plc_layout layout;
} variant;

static void try_variant(FILE *out, const variant *v, double *best_fix)
{
    plc_estimate *e = calloc(1, sizeof *e);
    if (!e) return;
    if (plc_estimate_layout_judged(&v->job, &v->layout, plc_cli_judge(), e) == 0 && e->valid) {
        fprintf(out, "  - %s: %s (%.1f GiB", v->what, e->fits ? "fits" : "still too large", e->peak_bytes / PLC_GIB);
        if (e->fits) fprintf(out, ", %.2f s/step, MFU %.1f%%", e->step_time_s, 100.0 * e->mfu);
        fputs(")\n", out);
        if (e->fits && best_fix) *best_fix = 1;
    }
    free(e);
}

void plc_report_no_fit(FILE *out, const plc_job *job, const plc_solution *s)
{
    char pc[32];
    fprintf(out, "no layout fits in %.1f GiB per rank (%s of %.1f GiB)\n", s->limit_bytes / PLC_GIB,
            plc_word_percent(job->layout.memory_limit, pc, sizeof pc), job->cluster.hw.mem_bytes / PLC_GIB);
    if (s->nclosest == 0) {
        fprintf(out, "no valid layout at all: the layout block's values contradict the model or cluster\n");
        return;
    }
    fprintf(out, "closest candidates:\n");
    for (int i = 0; i < s->nclosest; i++) {
        fputs("  ", out);
        plc_report_layout_line(out, &s->closest[i].layout);
        fputs("\n      ", out);
        plc_report_reason(out, &s->closest[i], s->limit_bytes);
        fputc('\n', out);
    }
    const plc_layout *base = &s->closest[0].layout;
    fprintf(out, "what would make the closest one fit (outside the layout block's constraints where needed):\n");
    double fixed = 0;
    variant v;
    if (base->recompute != PLC_RECOMPUTE_FULL) {
        v = (variant){"recompute = full", *job, *base};
        v.layout.recompute = PLC_RECOMPUTE_FULL;
        try_variant(out, &v, &fixed);
    }
    for (int64_t z = base->zero + 1; z <= 3; z++) {
        static const char *names[] = {"", "zero = 1", "zero = 2", "zero = 3"};
        v = (variant){names[z], *job, *base};
        v.layout.zero = z;
        try_variant(out, &v, &fixed);
    }
    if (base->micro_batch > 1) {
        v = (variant){"micro_batch = 1", *job, *base};
        v.layout.micro_batch = 1;
        try_variant(out, &v, &fixed);
    }
    if (job->train.precision == PLC_PREC_BF16 && (base->attention != PLC_ATTN_FLASH2 || !base->fused_rmsnorm)) {
        v = (variant){"attention = flash2, fused_rmsnorm = on", *job, *base};
        v.layout.attention = PLC_ATTN_FLASH2;
        v.layout.fused_rmsnorm = 1;
        try_variant(out, &v, &fixed);
    }
    if (base->tp > 1 && !base->sp) {
        v = (variant){"sp = on", *job, *base};
        v.layout.sp = 1;
        try_variant(out, &v, &fixed);
    }
    for (int64_t div = 2; div <= 4; div *= 2) {
        if (job->model.seq_len % (div * base->cp)) break;
        static const char *names[] = {"", "", "seq_len halved", "", "seq_len quartered"};
        v = (variant){names[div], *job, *base};
        v.job.model.seq_len = job->model.seq_len / div;
        try_variant(out, &v, &fixed);
    }
    /* larger clusters: solve again with dp free */
    for (int64_t mult = 2; mult <= 16; mult *= 2) {
        plc_job big = *job;
        big.cluster.nodes *= mult;
        big.layout.dp.kind = PLC_CHOICE_AUTO;
        plc_arena a;
        plc_arena_init(&a);
        plc_solution bs;
        if (plc_solve_opts_run(&big, &a, &(plc_solve_opts){.judge = plc_cli_judge(), .settle = 1}, &bs) == 0 && bs.nranked > 0) {
            fprintf(out, "  - %lld GPUs (%lld nodes): fits with ", (long long)plc_cluster_gpus(&big.cluster),
                    (long long)big.cluster.nodes);
            plc_report_layout_line(out, &bs.ranked[0].layout);
            fprintf(out, " (%.1f GiB, MFU %.1f%%)\n", bs.ranked[0].peak_bytes / PLC_GIB, 100.0 * bs.ranked[0].mfu);
            plc_arena_free(&a);
            fixed = 1;
            break;
        }
        plc_arena_free(&a);
    }
    if (!fixed) fprintf(out, "  nothing tried here fits: the model needs a larger device or a smaller model\n");
}
