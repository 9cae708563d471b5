/* test_solver_fixtures.h: jobs the solver tests build directly in C. */
#ifndef PLC_TEST_SOLVER_FIXTURES_H
#define PLC_TEST_SOLVER_FIXTURES_H

#include <string.h>

#include "compiler/solver/solver.h"
#include "plc/job.h"
#include "test_fixture_hw.h"

static inline void fixture_model(plc_model *m, const char *name, int64_t layers, int64_t hidden, int64_t ffn,
                                 int64_t heads, int64_t kv, int64_t vocab, int64_t seq, bool tied)
{
    memset(m, 0, sizeof *m);
    strncpy(m->name, name, sizeof m->name - 1);
    m->layers = layers; m->hidden = hidden; m->ffn_hidden = ffn; m->heads = heads;
    m->kv_heads = kv; m->vocab = vocab; m->seq_len = seq; m->tie_embeddings = tied;
    m->norm_eps = 1e-5; m->rope_theta = 10000;
}

static inline void fixture_layout_auto(plc_layout_spec *ls)
{
    memset(ls, 0, sizeof *ls); /* every choice PLC_CHOICE_AUTO (0) */
    ls->memory_limit = 1.0;
    ls->objective = PLC_OBJ_TIME;
}

static inline void fixture_pin(plc_choice *c, int64_t v)
{
    c->kind = PLC_CHOICE_SET;
    c->n = 1;
    c->v[0] = v;
}

/* Llama-1 13B (untied, 128k vocabulary as in calibration/README.md) on
 * nodes x 8 A100-80GB, 2048 sequences of 2048 tokens per step */
static inline void fixture_llama13b(plc_job *job, int64_t nodes)
{
    memset(job, 0, sizeof *job);
    job->path = "llama13b.plan";
    job->engine.grad_reduce_overlap = 1; /* plrun's profile (examples/engines.yaml) */
    fixture_model(&job->model, "llama-13b", 40, 5120, 13824, 40, 40, 128000, 2048, false);
    fixture_a100(&job->cluster.hw);
    job->cluster.hw.matmul_eff = 0.7;
    job->cluster.hw.hbm_eff = 0.5;
    job->cluster.hw.comm_eff = 0.35;
    job->cluster.hw.matmul_half_dim = 64;
    job->cluster.hw.runtime_reserved = 1.5 * 1073741824.0;
    job->cluster.hw.comm_buffer = 0.5 * 1073741824.0;
    job->cluster.nodes = nodes;
    job->cluster.gpus_per_node = 8;
    job->train.global_batch = 2048;
    job->train.precision = PLC_PREC_BF16;
    job->train.steps = 100;
    fixture_layout_auto(&job->layout);
}

/* the peak of the stages the search estimates (plc_memory_estimate with
 * all_stages false: those that bound the others) in *some, of every stage
 * in *all; l must have passed the rulebook */
static inline void fixture_peaks(const plc_job *job, const plc_layout *l, plc_estimate *some, plc_estimate *all)
{
    memset(some, 0, sizeof *some);
    memset(all, 0, sizeof *all);
    some->valid = all->valid = true;
    plc_memory_estimate(job, l, false, some);
    plc_memory_estimate(job, l, true, all);
}

#endif
