/* test_export.c: plc export's writers and checks (compiler/cli/export_*.c):
 * the Megatron-LM script carries the spec's block (GPT: LayerNorm, GELU and
 * biases; Llama: RMSNorm, SwiGLU, no biases), dropout 0 and the optimizer,
 * in flags every one of which the arguments.py of the release it is
 * written for defines (docs/engines/megatron-core-0.19-flags.txt for
 * engine megatron, megatron-core-r0.8-flags.txt for megatron_r0_8); the
 * pipeline split in that release's flags; what a release or torchtitan
 * cannot express is reported with its reason, and what they can is not. */
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

void register_test_export(void);
void register_test_export(void)
{
    CU_pSuite s = CU_add_suite("export", NULL, NULL);
    CU_add_test(s, "Megatron-LM: the block, dropout, each release's flags", test_megatron_blocks);
    CU_add_test(s, "Megatron-LM: the pipeline split in 0.19's flags", test_megatron_split);
    CU_add_test(s, "Megatron-LM: what a release cannot say", test_megatron_unsaid);
    CU_add_test(s, "torchtitan: the module and its refusals", test_torchtitan);
}
