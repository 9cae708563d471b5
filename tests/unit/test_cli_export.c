/* test_cli_export.c: plc export's writers and checks (compiler/cli/export_*.c):
 * the Megatron-LM script carries the spec's block (GPT: LayerNorm, GELU and
 * biases; Llama: RMSNorm, SwiGLU, no biases), dropout 0 and the optimizer,
 * in flags every one of which the arguments.py of the release it is
 * written for defines (docs/engines/megatron-core-0.19-flags.txt for
 * engine megatron, megatron-core-r0.8-flags.txt for megatron_r0_8); the
 * pipeline split in that release's flags; what a release or torchtitan
 * cannot express is reported with its reason, and what they can is not;
 * a mixture of experts in each release's MoE flags (the layer pattern as
 * Megatron parses it, the router, ep and etp, the profile's dispatcher). */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "test_solver_fixtures.h"

/* a bf16 job of model m on one node of 8, layout dp 8, the profile p */
static void fixture_in(plc_export_in *in, const plc_engine_profile *p)
{
    memset(in, 0, sizeof *in);
    in->source = "test.plan";
    fixture_model(&in->model, "test", 4, 256, 1024, 8, 8, 1000, 128, true);
    in->train.global_batch = 64;
    in->train.precision = PLC_PREC_BF16;
    in->train.beta1 = 0.9, in->train.beta2 = 0.95, in->train.eps = 1e-8, in->train.weight_decay = 0.1;
    in->train.lr_peak = 3e-4, in->train.lr_floor = 3e-5;
    in->train.warmup_steps = 10, in->train.decay_steps = 100, in->train.steps = 100;
    in->train.grad_clip = 1;
    in->nodes = 1, in->gpus_per_node = 8;
    plc_layout *l = &in->layout;
    l->dp = 8, l->tp = 1, l->pp = 1, l->cp = 1, l->vpp = 1, l->micro_batch = 2;
    l->schedule = PLC_SCHED_1F1B, l->recompute = PLC_RECOMPUTE_NONE, l->zero = 1, l->attention = PLC_ATTN_FLASH2;
    l->fused_rmsnorm = 1;
    in->predicted_by = "a test";
    in->base = "m:f";
    in->profile = p;
}

/* the writer's output as text (freed by the caller) */
static char *written(void (*write)(FILE *, const plc_export_in *), const plc_export_in *in)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    write(f, in);
    fclose(f);
    return buf;
}

#define FLAGS_0_19 "../docs/engines/megatron-core-0.19-flags.txt"
#define FLAGS_R0_8 "../docs/engines/megatron-core-r0.8-flags.txt"

/* every "--flag" between ARGS=( and ) is on the release's list (path) */
static void check_flags_known(const char *script, const char *path)
{
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char known[64 * 1024];
    size_t n = fread(known, 1, sizeof known - 1, f);
    known[n] = 0;
    fclose(f);
    const char *args = strstr(script, "ARGS=(\n"), *end = args ? strstr(args, "\n)\n") : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    int flags = 0;
    for (const char *c = args; c < end; c++) {
        if (c[0] != '-' || c[1] != '-' || (c > args && c[-1] != ' ')) continue;
        char flag[80] = "\n";
        size_t k = 1;
        while (k + 2 < sizeof flag && (c[k - 1] == '-' || (c[k - 1] >= 'a' && c[k - 1] <= 'z') || (c[k - 1] >= '0' && c[k - 1] <= '9')))
            flag[k] = c[k - 1], k++;
        flag[k++] = '\n';
        flag[k] = 0;
        if (!strstr(known, flag)) fprintf(stderr, "flag not in %s: %s", path, flag + 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(known, flag));
        flags++;
    }
    CU_ASSERT(flags > 20);
}

static void test_megatron_blocks(void)
{
    plc_engine_profile p;
    memset(&p, 0, sizeof p);
    strcpy(p.describes, "test profile");
    p.grad_reduce_overlap = p.param_gather_overlap = p.tp_overlap = 1;
    plc_export_in in;
    fixture_in(&in, &p);
    char *llama = written(plc_export_megatron_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(llama, "--normalization RMSNorm --norm-epsilon 1e-05\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(llama, "--swiglu --disable-bias-linear\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(llama, "--position-embedding-type rope --rotary-base 10000 --rotary-interleaved --no-rope-fusion\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(llama, "--attention-dropout 0 --hidden-dropout 0\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(llama, "--vocab-size 999 --make-vocab-size-divisible-by 1\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(llama, "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(llama, "--adam-beta1 0.9 --adam-beta2 0.95 --adam-eps 1e-08 --weight-decay 0.1 --clip-grad 1\n"));
    CU_ASSERT_PTR_NULL(strstr(llama, "--untie-embeddings-and-output-weights"));
    CU_ASSERT_PTR_NOT_NULL(strstr(llama, "--attention-backend flash --flash-attention-version 2\n"));
    CU_ASSERT_PTR_NULL(strstr(llama, "NVTE_"));
    check_flags_known(llama, FLAGS_0_19);
    free(llama);
    /* r0.8: the NVTE_* variables choose the attention, its own flags only */
    char *old = written(plc_export_megatron_r0_8_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(old, "export NVTE_FLASH_ATTN=1 NVTE_FUSED_ATTN=0\n"));
    CU_ASSERT_PTR_NULL(strstr(old, "--attention-backend"));
    CU_ASSERT_PTR_NOT_NULL(strstr(old, "docs/engines/megatron-core-r0.8-flags.txt"));
    check_flags_known(old, FLAGS_R0_8);
    free(old);

    in.model.arch = PLC_ARCH_GPT;
    in.model.positions = PLC_POS_LEARNED;
    in.model.tie_embeddings = false;
    in.layout.tp = 4, in.layout.dp = 2, in.layout.sp = 1;
    in.layout.pp = 2, in.layout.dp = 1, in.layout.vpp = 2, in.layout.schedule = PLC_SCHED_INTERLEAVED;
    in.layout.recompute = PLC_RECOMPUTE_BLOCK, in.layout.recompute_layers = 1;
    in.layout.attention = PLC_ATTN_FUSED;
    char *gpt = written(plc_export_megatron_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(gpt, "--normalization LayerNorm --norm-epsilon 1e-05\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gpt, "--position-embedding-type learned_absolute\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gpt, "--untie-embeddings-and-output-weights\n"));
    CU_ASSERT_PTR_NULL(strstr(gpt, "--swiglu"));
    CU_ASSERT_PTR_NULL(strstr(gpt, "--disable-bias-linear"));
    CU_ASSERT_PTR_NULL(strstr(gpt, "RMSNorm"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gpt, "--sequence-parallel --tp-comm-overlap\n"));
    /* 4 layers over pp 2, vpp 2; the profile has no p2p overlap */
    CU_ASSERT_PTR_NOT_NULL(strstr(gpt, "--num-layers-per-virtual-pipeline-stage 1 --no-overlap-p2p-communication\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gpt, "--recompute-granularity full --recompute-method block --recompute-num-layers 1\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gpt, "--attention-backend unfused\n"));
    /* 1000 ids over tp 4: no padding; over tp 3 there would be */
    CU_ASSERT_PTR_NULL(strstr(gpt, "padding logits"));
    check_flags_known(gpt, FLAGS_0_19);
    free(gpt);
    gpt = written(plc_export_megatron_r0_8_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(gpt, "export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0\n"));
    check_flags_known(gpt, FLAGS_R0_8);
    free(gpt);
}

/* the split flags of unequal stages: the embedding and loss counted as
 * layers where that gives plc's split (plc_stage_layers), the first and
 * last counts with vpp 1, the explicit layout with interleaving */
static void test_megatron_split(void)
{
    plc_engine_profile p;
    memset(&p, 0, sizeof p);
    strcpy(p.describes, "test profile");
    p.p2p_overlap = 1;
    plc_export_in in;
    fixture_in(&in, &p);
    static const struct { int64_t layers, pp, vpp; const char *want; } cases[] = {
        /* Llama 3.1 405B: 126 + 2 = 128 over pp 16, 8 a rank */
        {126, 16, 4, "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split\n"
                     "    --num-layers-per-virtual-pipeline-stage 2\n"},
        {126, 16, 1, "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split\n"},
        /* 32 on 6: 4, 6 x 4, 4 (34 does not divide by 6) */
        {32, 6, 1, "--decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 4\n"},
        /* 32 on 4 x 3 virtual stages: 1, 3 x 10, 1 */
        {32, 4, 3, "--pipeline-model-parallel-layout \"Et*1|(t*3|)*10,t*1L\"\n"},
        /* equal */
        {32, 4, 2, "--num-layers-per-virtual-pipeline-stage 4\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        in.model.layers = cases[i].layers;
        in.layout.pp = cases[i].pp, in.layout.vpp = cases[i].vpp, in.layout.dp = 1;
        in.layout.schedule = cases[i].vpp > 1 ? PLC_SCHED_INTERLEAVED : PLC_SCHED_1F1B;
        char *sh = written(plc_export_megatron_write, &in);
        if (!strstr(sh, cases[i].want)) fprintf(stderr, "case %zu: want %s in\n%s", i, cases[i].want, sh);
        CU_ASSERT_PTR_NOT_NULL(strstr(sh, cases[i].want));
        if (cases[i].vpp > 1) CU_ASSERT_PTR_NULL(strstr(sh, "--decoder-first"));
        check_flags_known(sh, FLAGS_0_19);
        free(sh);
        char buf[256];
        CU_ASSERT_PTR_NULL(plc_export_megatron_unsaid(&in.model, &in.train, &in.layout, &p, buf, sizeof buf));
        /* r0.8 asserts that pp (pp * vpp) divides layers */
        const char *why = plc_export_megatron_r0_8_unsaid(&in.model, &in.train, &in.layout, &p, buf, sizeof buf);
        if (cases[i].layers % (cases[i].pp * cases[i].vpp)) {
            CU_ASSERT_PTR_NOT_NULL(why);
            if (why) CU_ASSERT_PTR_NOT_NULL(strstr(why, "Megatron-Core r0.8 (core_v0.8.0, commit baf94af3c6) asserts that pp divides"));
        } else CU_ASSERT_PTR_NULL(why);
    }
}

static void test_megatron_unsaid(void)
{
    plc_engine_profile p;
    memset(&p, 0, sizeof p);
    strcpy(p.describes, "test profile");
    plc_export_in in;
    fixture_in(&in, &p);
    char buf[256];
    CU_ASSERT_PTR_NULL(plc_export_megatron_model_unsaid(&in.model, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NULL(plc_export_megatron_unsaid(&in.model, &in.train, &in.layout, &p, buf, sizeof buf));
    in.train.warmup_steps = 100;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_model_unsaid(&in.model, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "asserts lr_warmup_steps < lr_decay_steps"));
    static const struct { int zero, attention, recompute, schedule, pp, vpp; const char *why; } bad[] = {
        {3, PLC_ATTN_FLASH2, PLC_RECOMPUTE_NONE, PLC_SCHED_1F1B, 1, 1, "not Megatron-FSDP"},
        {1, PLC_ATTN_NAIVE, PLC_RECOMPUTE_NONE, PLC_SCHED_1F1B, 1, 1, "attention = naive"},
        {1, PLC_ATTN_FLASH2, PLC_RECOMPUTE_EVERY, PLC_SCHED_1F1B, 1, 1, "not every k-th"},
        {1, PLC_ATTN_FLASH2, PLC_RECOMPUTE_NONE, PLC_SCHED_INTERLEAVED, 2, 2, "asserts pp > 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        plc_layout l = in.layout;
        l.zero = bad[i].zero, l.attention = bad[i].attention, l.recompute = bad[i].recompute;
        l.schedule = bad[i].schedule, l.pp = bad[i].pp, l.vpp = bad[i].vpp, l.dp = 8 / l.pp;
        const char *why = plc_export_megatron_unsaid(&in.model, &in.train, &l, &p, buf, sizeof buf);
        CU_ASSERT_PTR_NOT_NULL(why);
        if (why) CU_ASSERT_PTR_NOT_NULL(strstr(why, bad[i].why));
    }
    /* with p2p overlap, interleaved on pp 2 is fine */
    p.p2p_overlap = 1;
    plc_layout l = in.layout;
    l.schedule = PLC_SCHED_INTERLEAVED, l.pp = 2, l.vpp = 2, l.dp = 4;
    CU_ASSERT_PTR_NULL(plc_export_megatron_unsaid(&in.model, &in.train, &l, &p, buf, sizeof buf));
    l = in.layout;
    l.zero = 3;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_r0_8_unsaid(&in.model, &in.train, &l, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "it has no FSDP"));
}

static void test_torchtitan(void)
{
    plc_engine_profile p;
    memset(&p, 0, sizeof p);
    strcpy(p.describes, "test profile");
    plc_export_in in;
    fixture_in(&in, &p);
    in.layout.zero = 3;
    char buf[256];
    CU_ASSERT_PTR_NULL(plc_export_torchtitan_model_unsaid(&in.model, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NULL(plc_export_torchtitan_unsaid(&in.model, &in.train, &in.layout, &p, buf, sizeof buf));
    char *py = written(plc_export_torchtitan_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "want = dict(layers=4, hidden=256, vocab=1000, heads=8, kv_heads=8, ffn_hidden=1024)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "model.enable_weight_tying = True\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "rope.scaling = \"none\"\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "adamw = dict(lr=0.0003, betas=(0.9, 0.95), eps=1e-08, weight_decay=0.1)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "optimizer_kwargs=dict(adamw, weight_decay=0.0)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "warmup_steps=10, decay_type=\"cosine\", min_lr_factor=0.1)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "p.data_parallel_shard_degree = 8\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "config.activation_checkpoint = None\n"));
    free(py);
    in.layout.recompute = PLC_RECOMPUTE_SELECTIVE;
    py = written(plc_export_torchtitan_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "config.activation_checkpoint = SelectiveAC.Config()\n"));
    free(py);

    plc_model gpt = in.model;
    gpt.arch = PLC_ARCH_GPT;
    CU_ASSERT_PTR_NOT_NULL(plc_export_torchtitan_model_unsaid(&gpt, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "has no GPT block"));
    plc_train t = in.train;
    t.decay_steps = 50;
    CU_ASSERT_PTR_NOT_NULL(plc_export_torchtitan_model_unsaid(&in.model, &t, NULL, &p, buf, sizeof buf));
    t = in.train;
    t.precision = PLC_PREC_FP8;
    CU_ASSERT_PTR_NOT_NULL(plc_export_torchtitan_model_unsaid(&in.model, &t, NULL, &p, buf, sizeof buf));
    plc_layout l = in.layout;
    l.recompute = PLC_RECOMPUTE_EVERY, l.recompute_layers = 2;
    CU_ASSERT_PTR_NOT_NULL(plc_export_torchtitan_unsaid(&in.model, &in.train, &l, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "not chosen layers"));
    l = in.layout;
    l.pp = 2, l.dp = 4; /* tied embeddings with a pipeline */
    CU_ASSERT_PTR_NOT_NULL(plc_export_torchtitan_unsaid(&in.model, &in.train, &l, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "Weight tying is not supported with Pipeline Parallel"));
}

/* mixture of experts: a DeepSeek-V3-shaped block (61 layers, the first 3
 * dense, 256 sigmoid-routed experts of 2048 in 8 groups of which 4, top-8,
 * scale 2.5, one shared expert, the expert bias, a small aux loss) without
 * its latent attention, on ep 8 under a profile with the flex dispatcher,
 * grouped GEMM and the EP overlap: 0.19's flags, each on its list */
static void moe_fixture(plc_export_in *in, plc_engine_profile *p)
{
    memset(p, 0, sizeof *p);
    strcpy(p->describes, "test profile");
    p->moe = 1, p->moe_etp = 1, p->moe_dispatcher = 2, p->moe_grouped_gemm = 1, p->moe_comm_overlap = 1;
    fixture_in(in, p);
    plc_model *m = &in->model;
    m->layers = 61;
    plc_moe *e = &m->moe;
    e->experts = 256, e->top_k = 8, e->shared_experts = 1, e->expert_ffn_hidden = 2048, e->dense_layers = 3;
    e->moe_every = 1, e->router = PLC_ROUTER_SIGMOID, e->router_groups = 8, e->router_groups_top = 4;
    e->route_scale = 2.5, e->aux_loss = 1e-4, e->expert_bias = true;
    in->layout.ep = 8, in->layout.etp = 1;
}

static void test_megatron_moe(void)
{
    plc_engine_profile p;
    plc_export_in in;
    moe_fixture(&in, &p);
    char buf[512];
    CU_ASSERT_PTR_NULL(plc_export_megatron_model_unsaid(&in.model, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NULL(plc_export_megatron_unsaid(&in.model, &in.train, &in.layout, &p, buf, sizeof buf));
    char *sh = written(plc_export_megatron_write, &in);
    static const char *const want[] = {
        "--num-experts 256 --moe-router-topk 8\n",
        "--moe-ffn-hidden-size 2048\n",
        "--moe-layer-freq \"([0]*3+[1]*58)\"\n",
        "--moe-shared-expert-intermediate-size 2048\n",
        "--moe-router-score-function sigmoid\n",
        "--moe-router-num-groups 8 --moe-router-group-topk 4\n",
        "--moe-router-topk-scaling-factor 2.5\n",
        "--moe-router-enable-expert-bias\n",
        "--moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 0.0001\n",
        "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1\n",
        "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep --moe-grouped-gemm\n",
        "--overlap-moe-expert-parallel-comm --delay-wgrad-compute\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!strstr(sh, want[i])) fprintf(stderr, "want %s in\n%s", want[i], sh);
        CU_ASSERT_PTR_NOT_NULL(strstr(sh, want[i]));
    }
    CU_ASSERT_PTR_NULL(strstr(sh, "--moe-expert-capacity-factor")); /* dropless */
    check_flags_known(sh, FLAGS_0_19);
    free(sh);

    /* every 2nd layer after 3 dense ones, 2 shared experts of 1024, capacity
     * by position, no aux loss, the alltoall dispatcher without overlap */
    in.model.moe.moe_every = 2, in.model.moe.shared_experts = 2, in.model.moe.shared_ffn_hidden = 1024;
    in.model.moe.capacity_factor = 1.25, in.model.moe.aux_loss = 0;
    p.moe_dispatcher = 1, p.moe_comm_overlap = 0, p.moe_grouped_gemm = 0;
    CU_ASSERT_PTR_NULL(plc_export_megatron_unsaid(&in.model, &in.train, &in.layout, &p, buf, sizeof buf));
    sh = written(plc_export_megatron_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--moe-layer-freq \"([0]*3+([1]+[0]*1)*29)\"\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--moe-shared-expert-intermediate-size 2048\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--moe-router-load-balancing-type none\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--moe-expert-capacity-factor 1.25 --moe-token-drop-policy position\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--moe-token-dispatcher-type alltoall\n"));
    CU_ASSERT_PTR_NULL(strstr(sh, "--overlap-moe-expert-parallel-comm"));
    check_flags_known(sh, FLAGS_0_19);
    free(sh);
    in.model.moe.dense_layers = 0, in.model.moe.moe_every = 3;
    sh = written(plc_export_megatron_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--moe-layer-freq 3\n"));
    free(sh);
    in.model.moe.dense_layers = 2, in.model.moe.moe_every = 3; /* 59 after: 19 groups of 3, then [1]+[0]*1 */
    sh = written(plc_export_megatron_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--moe-layer-freq \"([0]*2+([1]+[0]*2)*19+[1]+[0]*1)\"\n"));
    free(sh);

    /* what 0.19 cannot say, each with its reason */
    plc_layout l = in.layout;
    l.tp = 2, l.dp = 4;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_unsaid(&in.model, &in.train, &l, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "without also enabling sequence parallelism"));
    l.sp = 1;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_unsaid(&in.model, &in.train, &l, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "each rank's sequence shard"));
    /* capacity under the allgather dispatcher: 0.19 drops in the router */
    p.moe_dispatcher = 0;
    CU_ASSERT_PTR_NULL(plc_export_megatron_unsaid(&in.model, &in.train, &in.layout, &p, buf, sizeof buf));
    sh = written(plc_export_megatron_write, &in);
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--moe-token-dispatcher-type allgather\n"));
    free(sh);
    p.moe_dispatcher = 1;
    in.model.moe.capacity_factor = 0;
    plc_model m = in.model;
    m.arch = PLC_ARCH_GPT;
    l = in.layout;
    l.etp = 2;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_unsaid(&m, &in.train, &l, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "Bias in Moe is only supported when ETP==1"));
    CU_ASSERT_PTR_NULL(plc_export_megatron_unsaid(&in.model, &in.train, &l, &p, buf, sizeof buf));
    m = in.model;
    m.moe.router = PLC_ROUTER_SOFTMAX, m.moe.router_groups = 0, m.moe.expert_bias = false, m.moe.top_k = 1;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_model_unsaid(&m, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--moe-router-pre-softmax"));
    m.moe.top_k = 2, m.moe.expert_bias = true;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_model_unsaid(&m, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "sigmoid score function only"));
    m = in.model;
    m.moe.router_groups_top = 2; /* top-8 over 2 groups: Megatron scores a group by its best 4 */
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_model_unsaid(&m, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "top-(topk / group_topk) = 4"));
    m = in.model;
    m.mla.kv_rank = 512, m.mla.q_rank = 1536, m.mla.nope_head_dim = 128, m.mla.rope_head_dim = 64, m.mla.v_head_dim = 128;
    /* latent attention: 0.19's MLA flags, RoPE in halves with --rope-type
     * rope (MLA's default is YaRN), no grouped-query flags; r0.8 has none */
    CU_ASSERT_PTR_NULL(plc_export_megatron_model_unsaid(&m, &in.train, NULL, &p, buf, sizeof buf));
    plc_export_in mla = in;
    mla.model = m;
    mla.model.kv_heads = 4; /* ignored under latent attention */
    sh = written(plc_export_megatron_write, &mla);
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--position-embedding-type rope --rope-type rope --rotary-base 10000\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "# Latent attention: Megatron-Core's MLA rotates RoPE halves"));
    CU_ASSERT_PTR_NULL(strstr(sh, "--rotary-interleaved"));
    CU_ASSERT_PTR_NULL(strstr(sh, "--group-query-attention"));
    check_flags_known(sh, FLAGS_0_19);
    free(sh);
    mla.model.mla.q_rank = 0; /* no query compression: Megatron's default (None) */
    sh = written(plc_export_megatron_write, &mla);
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--multi-latent-attention --kv-lora-rank 512\n"));
    free(sh);
    m.moe.experts = 0; /* latent attention in a dense model */
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_r0_8_model_unsaid(&m, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "no --multi-latent-attention"));

    /* r0.8: DeepSeek's block is refused (its experts' own width first); a
     * Mixtral-like one on etp = tp, ep dividing dp, is written in r0.8's flags */
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_r0_8_model_unsaid(&in.model, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "no --moe-ffn-hidden-size"));
    m = in.model;
    m.moe = (plc_moe){.experts = 8, .top_k = 2, .expert_ffn_hidden = m.ffn_hidden, .moe_every = 1, .route_scale = 1,
                      .aux_loss = 0.02};
    plc_export_in old = in;
    old.model = m;
    old.layout.tp = 2, old.layout.etp = 2, old.layout.dp = 4, old.layout.ep = 4, old.layout.sp = 1;
    CU_ASSERT_PTR_NULL(plc_export_megatron_r0_8_model_unsaid(&old.model, &old.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NULL(plc_export_megatron_r0_8_unsaid(&old.model, &old.train, &old.layout, &p, buf, sizeof buf));
    sh = written(plc_export_megatron_r0_8_write, &old);
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--num-experts 8 --moe-router-topk 2\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--expert-model-parallel-size 4\n"));
    CU_ASSERT_PTR_NULL(strstr(sh, "--expert-tensor-parallel-size"));
    check_flags_known(sh, FLAGS_R0_8);
    free(sh);
    old.layout.etp = 1;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_r0_8_unsaid(&old.model, &old.train, &old.layout, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "shards the experts over the attention's tp"));
    old.layout.etp = 2, old.layout.ep = 8, old.layout.dp = 4, old.layout.cp = 2;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_r0_8_unsaid(&old.model, &old.train, &old.layout, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "asserts that ep divides dp"));
    old.layout.ep = 4, old.layout.cp = 1, old.layout.tp = 1, old.layout.etp = 1, old.layout.dp = 8;
    old.model.moe.capacity_factor = 1.5, p.moe_dispatcher = 0;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_r0_8_unsaid(&old.model, &old.train, &old.layout, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "only works with alltoall token dispatcher"));
    p.moe_dispatcher = 1;
    CU_ASSERT_PTR_NULL(plc_export_megatron_r0_8_unsaid(&old.model, &old.train, &old.layout, &p, buf, sizeof buf));
    sh = written(plc_export_megatron_r0_8_write, &old);
    CU_ASSERT_PTR_NOT_NULL(strstr(sh, "--moe-expert-capacity-factor 1.5 --moe-token-drop-policy position\n"));
    check_flags_known(sh, FLAGS_R0_8);
    free(sh);
    old.train.precision = PLC_PREC_FP32, p.moe_grouped_gemm = 1;
    CU_ASSERT_PTR_NOT_NULL(plc_export_megatron_r0_8_model_unsaid(&old.model, &old.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "GroupedGEMM for MoE only supports bf16"));

    /* torchtitan: no expert tensor parallelism, no auxiliary loss */
    CU_ASSERT_PTR_NOT_NULL(plc_export_torchtitan_unsaid(&in.model, &in.train, &l, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "has no expert tensor parallelism"));
    CU_ASSERT_PTR_NOT_NULL(plc_export_torchtitan_model_unsaid(&m, &in.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "has no auxiliary load-balancing loss"));
    /* DeepSeek's block without its aux loss: the module checks the experts
     * per layer and sets the router; ep over FSDP x cp x tp */
    plc_export_in tt;
    moe_fixture(&tt, &p);
    tt.model.moe.aux_loss = 0, tt.layout.zero = 3;
    CU_ASSERT_PTR_NULL(plc_export_torchtitan_model_unsaid(&tt.model, &tt.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NULL(plc_export_torchtitan_unsaid(&tt.model, &tt.train, &tt.layout, &p, buf, sizeof buf));
    char *py = written(plc_export_torchtitan_write, &tt);
    static const char *const want_tt[] = {
        "moe_layers = {3, 4, 5, ",
        ", 59, 60}\n",
        "want = dict(experts=256, expert_ffn_hidden=2048, shared_ffn_hidden=2048)\n",
        "router.top_k = 8\n",
        "router.score_func = \"sigmoid\"\n",
        "router.route_norm = True\n",
        "router.route_scale = 2.5\n",
        "router.num_expert_groups = 8\n",
        "router.num_limited_groups = 4\n",
        "if moe.load_balance_coeff is None:\n",
        "_plc_dense_ffn_hidden = 1024\n",
        "want = dict(layers=61, hidden=256, vocab=1000, heads=8, kv_heads=8)\n",
        "p.expert_parallel_degree = 8\n",
    };
    for (size_t i = 0; i < sizeof want_tt / sizeof want_tt[0]; i++) {
        if (!strstr(py, want_tt[i])) fprintf(stderr, "want %s in\n%s", want_tt[i], py);
        CU_ASSERT_PTR_NOT_NULL(strstr(py, want_tt[i]));
    }
    CU_ASSERT_PTR_NULL(strstr(py, "moe_layers = {0"));
    free(py);
    tt.layout.zero = 0; /* replicated: no FSDP ranks for ep 8 to borrow */
    CU_ASSERT_PTR_NOT_NULL(plc_export_torchtitan_unsaid(&tt.model, &tt.train, &tt.layout, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "asserts that ep divides dp_shard * cp * tp"));
    tt.layout.zero = 3, tt.model.moe.capacity_factor = 1.5;
    CU_ASSERT_PTR_NOT_NULL(plc_export_torchtitan_model_unsaid(&tt.model, &tt.train, NULL, &p, buf, sizeof buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "dropless"));
}

void register_test_cli_export(void);
void register_test_cli_export(void)
{
    CU_pSuite s = CU_add_suite("export", NULL, NULL);
    CU_add_test(s, "Megatron-LM: the block, dropout, each release's flags", test_megatron_blocks);
    CU_add_test(s, "Megatron-LM: the pipeline split in 0.19's flags", test_megatron_split);
    CU_add_test(s, "Megatron-LM: what a release cannot say", test_megatron_unsaid);
    CU_add_test(s, "torchtitan: the module and its refusals", test_torchtitan);
    CU_add_test(s, "Megatron-LM and torchtitan: mixture of experts", test_megatron_moe);
}
