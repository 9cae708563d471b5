/* test_plan_util.h: a small job built in C (no spec file) and helpers to
 * lower it under a layout, for the plan and lowering tests. */
#ifndef PLC_TEST_PLAN_UTIL_H
#define PLC_TEST_PLAN_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/plan_io.h"
#include "compiler/lower/lower.h"
#include "compiler/plantools/plantools.h"
#include "test_fixture_hw.h"

/* the equivalence test's model: GQA, 4 layers, tiny */
static inline void tp_job(plc_job *job, int layers, bool tied, int64_t global_batch)
{
    memset(job, 0, sizeof *job);
    job->path = "test.plan";
    job->engine.grad_reduce_overlap = 1; /* plrun's profile (examples/engines.yaml) */
    job->source = "model \"t\" { }\n";
    job->source_len = strlen(job->source);
    plc_model *m = &job->model;
    snprintf(m->name, sizeof m->name, "t");
    m->layers = layers;
    m->hidden = 32;
    m->ffn_hidden = 64;
    m->heads = 4;
    m->kv_heads = 2;
    m->vocab = 64;
    m->seq_len = 16;
    m->tie_embeddings = tied;
    m->norm_eps = 1e-5;
    m->rope_theta = 10000;
    plc_hw *hw = &job->cluster.hw; /* a small GPU: the A100 fixture where it differs */
    fixture_a100(hw);
    snprintf(hw->name, sizeof hw->name, "test-gpu");
    hw->mem_bytes = 80e9;
    hw->flops_bf16 = 300e12;
    hw->flops_fp32 = 20e12;
    hw->hbm_bw = 2e12;
    hw->intra_node_bw = 200e9;
    hw->matmul_eff = 0.7;
    hw->matmul_half_dim = 64;
    hw->hbm_eff = 0.8;
    hw->comm_eff = 0.8;
    hw->kernel_launch = 4e-6;
    job->cluster.nodes = 1;
    job->cluster.gpus_per_node = 8;
    job->layout.memory_limit = 1.0; /* the front end's default; every dimension auto */
    plc_train *t = &job->train;
    t->global_batch = global_batch;
    t->precision = PLC_PREC_FP32;
    t->beta1 = 0.9;
    t->beta2 = 0.95;
    t->eps = 1e-8;
    t->weight_decay = 0.1;
    t->lr_peak = 3e-3;
    t->lr_floor = 3e-4;
    t->warmup_steps = 3;
    t->decay_steps = 20;
    t->grad_clip = 1.0;
    t->steps = 20;
    t->seed = 5;
}

static inline plc_layout tp_layout(int dp, int tp, int pp, int cp, int sp, int zero, plc_recompute rc, int vpp,
                                   plc_schedule sched, int mb)
{
    plc_layout l;
    memset(&l, 0, sizeof l);
    l.dp = dp;
    l.tp = tp;
    l.pp = pp;
    l.cp = cp;
    l.sp = sp;
    l.zero = zero;
    l.recompute = rc;
    l.vpp = vpp;
    l.schedule = sched;
    l.micro_batch = mb;
    l.attention = PLC_ATTN_NAIVE;
    return l;
}

/* lowers; prints the error and returns -1 on failure */
static inline int tp_lower(const plc_job *job, plc_layout l, plc_arena *a, plc_plan *out)
{
    char err[512];
    if (plc_lower(job, &l, NULL, a, out, NULL, err, sizeof err)) {
        fprintf(stderr, "\nlowering failed: %s\n", err);
        return -1;
    }
    return 0;
}

/* the dump of a plan as a malloc'd string */
static inline char *tp_dump(const plc_plan *p, int64_t rank)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    plc_dump_plan(f, p, rank, true);
    fclose(f);
    return buf;
}

#endif
