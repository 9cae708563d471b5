/* tests/unit/test_solver_model_math_gpt.c: parameter counts and FLOPs of the GPT
 * block (compiler/solver/solver.h) against known values: Hugging Face's
 * GPT-2 counts, FLOPs per token worked out by hand in the comments, and a
 * row of Narayanan et al. 2021, Table 1. */
#include <CUnit/CUnit.h>
#include <math.h>

#include "common/tensors.h"
#include "compiler/solver/solver.h"
#include "test_solver_fixtures.h"

/* GPT-2 shapes: 1024 learned positions, vocab 50257, tied, ffn 4h */
static void gpt2(plc_model *m, int64_t layers, int64_t hidden, int64_t heads)
{
    fixture_model(m, "gpt2", layers, hidden, 4 * hidden, heads, heads, 50257, 1024, true);
    m->arch = PLC_ARCH_GPT;
    m->positions = PLC_POS_LEARNED;
}

/* GPT-2 small, h = 768, as Hugging Face's state dict holds it:
 *   wte 50257 x 768                      38,597,376
 *   wpe 1024 x 768                          786,432
 *   a layer:
 *     ln_1, ln_2 (weight, bias)  4 x 768      3,072
 *     c_attn 768 x 2304 + 2304            1,771,776
 *     attn.c_proj 768 x 768 + 768           590,592
 *     mlp.c_fc 768 x 3072 + 3072          2,362,368
 *     mlp.c_proj 3072 x 768 + 768         2,360,064
 *     = 12 h^2 + 13 h                     7,087,872   x 12 = 85,054,464
 *   ln_f 2 x 768                              1,536
 *   total                               124,439,808 */
static void test_gpt2_params(void)
{
    plc_model m;
    gpt2(&m, 12, 768, 12);
    CU_ASSERT_EQUAL(plc_params_total(&m), 124439808LL);
    CU_ASSERT_EQUAL(plc_params_layer(&m), 7087872LL);
    CU_ASSERT_EQUAL(plc_params_layer_weights(&m), 12LL * 768 * 768);
    /* tp splits the weights and the q, k, v, fc biases (3h + 4h) ... */
    CU_ASSERT_EQUAL(plc_params_layer_matrices(&m), 12LL * 768 * 768 + 7 * 768);
    /* ... and replicates the two LayerNorms (4h) and the o, proj biases (2h) */
    CU_ASSERT_EQUAL(plc_params_layer_norms(&m), 6LL * 768);
    CU_ASSERT_EQUAL(plc_params_positions(&m), 786432LL);
    CU_ASSERT_EQUAL(plc_params_embedding(&m), 38597376LL + 786432);
    /* medium (24 layers, h 1024, 16 heads), large (36, 1280, 20), XL (48,
     * 1600, 25): the same sum, 50257 h + 1024 h + L (12 h^2 + 13 h) + 2 h */
    gpt2(&m, 24, 1024, 16);
    CU_ASSERT_EQUAL(plc_params_total(&m), 354823168LL);
    gpt2(&m, 36, 1280, 20);
    CU_ASSERT_EQUAL(plc_params_total(&m), 774030080LL);
    gpt2(&m, 48, 1600, 25);
    CU_ASSERT_EQUAL(plc_params_total(&m), 1557611200LL);
}

/* the variants: untied head, rotary positions, GQA, a non-4h MLP */
static void test_gpt_variants(void)
{
    plc_model m;
    gpt2(&m, 12, 768, 12);
    m.tie_embeddings = false; /* + the head, 50257 x 768 */
    CU_ASSERT_EQUAL(plc_params_total(&m), 124439808LL + 38597376);
    m.tie_embeddings = true;
    m.positions = PLC_POS_ROPE; /* no wpe */
    CU_ASSERT_EQUAL(plc_params_total(&m), 124439808LL - 786432);
    m.positions = PLC_POS_LEARNED;
    /* 4 kv heads of 64: k and v shrink from 768 x 768 + 768 to 768 x 256 +
     * 256, a layer loses 2 (768 x 512 + 512) = 787,456, the model 9,449,472 */
    m.kv_heads = 4;
    CU_ASSERT_EQUAL(plc_params_total(&m), 124439808LL - 9449472);
    m.kv_heads = 12;
    /* ffn 2048 instead of 3072: each layer loses 2 x 768 x 1024 weights and
     * 1024 fc biases = 1,573,888; the model 18,886,656 */
    m.ffn_hidden = 2048;
    CU_ASSERT_EQUAL(plc_params_total(&m), 124439808LL - 18886656);
    /* the Llama block of the same shape: no biases, RMSNorm, three MLP
     * matrices, and arch = 0 is Llama */
    plc_model l;
    fixture_model(&l, "llama", 12, 768, 3072, 12, 12, 50257, 1024, true);
    CU_ASSERT_EQUAL(l.arch, PLC_ARCH_LLAMA);
    CU_ASSERT_EQUAL(l.positions, PLC_POS_ROPE);
    CU_ASSERT_EQUAL(plc_params_total(&l), 50257LL * 768 + 12 * (4LL * 768 * 768 + 3LL * 768 * 3072 + 2 * 768) + 768);
}

/* every stage, summed, is the whole model (a tied head copied onto the last
 * stage when pp > 1); the position table sits on stage 0, whole on every
 * tp rank */
static void test_gpt_stages(void)
{
    plc_model m;
    gpt2(&m, 24, 1024, 16);
    int64_t pps[] = {1, 2, 4, 24};
    for (int tied = 0; tied < 2; tied++) {
        m.tie_embeddings = tied;
        for (size_t i = 0; i < sizeof pps / sizeof pps[0]; i++) {
            double sum = 0;
            for (int64_t s = 0; s < pps[i]; s++) {
                plc_stage_params sp;
                plc_stage_params_of(&m, 1, pps[i], 1, s, &sp);
                sum += plc_stage_params_total(&sp);
            }
            double expect = (double)plc_params_total(&m) + (tied && pps[i] > 1 ? 50257.0 * 1024 : 0);
            CU_ASSERT_DOUBLE_EQUAL(sum, expect, 0.5);
        }
    }
    plc_stage_params a, b;
    plc_stage_params_of(&m, 1, 2, 1, 0, &a);
    plc_stage_params_of(&m, 4, 2, 1, 0, &b);
    /* the vocabulary is padded to a multiple of tp: 50260 rows, 12565 a rank */
    CU_ASSERT_DOUBLE_EQUAL(b.embedding, 12565.0 * 1024 + 1024.0 * 1024, 0);
    CU_ASSERT_DOUBLE_EQUAL(b.norms, a.norms, 0);
    CU_ASSERT_DOUBLE_EQUAL(4 * b.layer_matrices, a.layer_matrices, 1e-6);
    /* tensors: 16 a layer; wte and wpe on stage 0; ln_f weight and bias, and
     * the tied copy (pp > 1), on the last */
    CU_ASSERT_EQUAL(plc_layer_tensors(&m), 16);
    CU_ASSERT_EQUAL(plc_stage_tensors(&m, 2, &a), 16 * 12 + 2);
    plc_stage_params_of(&m, 1, 2, 1, 1, &a);
    CU_ASSERT_EQUAL(plc_stage_tensors(&m, 2, &a), 16 * 12 + 2 + 1);
    plc_stage_params_of(&m, 1, 1, 1, 0, &a);
    CU_ASSERT_EQUAL(plc_stage_tensors(&m, 1, &a), 16 * 24 + 2 + 2);
}

/* FLOPs per token of GPT-2 small (L 12, h 768, s 1024, V 50257):
 *
 * PaLM, 6 N + 12 L h s:
 *   6 x 124,439,808 = 746,638,848;  12 x 12 x 768 x 1024 = 113,246,208
 *   = 859,885,056
 *
 * Megatron (Narayanan et al. 2021, eq. 3), 96 L h^2 (1 + s/6h + V/16Lh):
 *   96 L h^2 = 96 x 12 x 589,824       = 679,477,248
 *   x s/6h  = 16 L h s  = 16 x 12 x 768 x 1024 = 150,994,944
 *   x V/16Lh = 6 h V    = 6 x 768 x 50257      = 231,584,256
 *   = 1,062,056,448 per token; per batch of B sequences, x B x 1024
 *   (B = 8: 8,700,366,422,016). */
static void test_gpt2_flops(void)
{
    plc_model m;
    gpt2(&m, 12, 768, 12);
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_per_token_palm(&m), 859885056.0, 0.5);
    double megatron = plc_flops_per_token_megatron(&m);
    CU_ASSERT_DOUBLE_EQUAL(megatron, 1062056448.0, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(8 * 1024 * megatron, 8700366422016.0, 1.0);
    /* the exact count: a layer's forward is 2 x 12 h^2 + 4 h s; Megatron's
     * form is 4 passes over the layers (recompute) and 3 over the head */
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_layer_linear_fwd(&m), 24.0 * 768 * 768, 0);
    double layer = plc_flops_layer_linear_fwd(&m) + plc_flops_layer_attention_fwd(&m, false);
    double head = 2.0 * 768 * 50257;
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_per_token_fwd(&m, false), 12 * layer + head, 0);
    CU_ASSERT_DOUBLE_EQUAL(megatron, 4 * 12 * layer + 3 * head, 1e-3);
    /* 3 x the exact forward = PaLM's form, up to what 6 N counts without a
     * matmul: wpe, the biases (7h + 2h) and LayerNorms (4h) of every layer,
     * and ln_f (the tied wte is the head's matmul) */
    double no_matmul = 786432.0 + 12 * (9.0 * 768 + 4 * 768) + 2 * 768;
    CU_ASSERT_DOUBLE_EQUAL(3 * plc_flops_per_token_fwd(&m, false) + 6 * no_matmul, plc_flops_per_token_palm(&m), 0.5);
}

/* Narayanan et al. 2021, Table 1, the 1.7B row: L 24, h 2304, s 2048,
 * V 51200, 137 TFLOP/s per GPU; with eq. 3 per token (1.4750e10) that is
 * 9,287.93 tokens per second per GPU */
static void test_megatron_published(void)
{
    plc_model m;
    fixture_model(&m, "gpt-1.7b", 24, 2304, 4 * 2304, 24, 24, 51200, 2048, true);
    m.arch = PLC_ARCH_GPT;
    m.positions = PLC_POS_LEARNED;
    double f = plc_flops_per_token_megatron(&m);
    CU_ASSERT_DOUBLE_EQUAL(f, 96.0 * 24 * 2304 * 2304 + 16.0 * 24 * 2304 * 2048 + 6.0 * 2304 * 51200, 1e-2);
    CU_ASSERT_DOUBLE_EQUAL(137e12 / f, 9287.93, 0.01);
}

/* The tensor table (common/tensors.h) names GPT-2 small's 196 tensors as
 * Hugging Face's GPT-2 does (docs/model.md) and holds exactly the model
 * math's parameters; so do
 * the variants. Biases start at zero, norm weights at one. */
static void test_gpt_tensor_table(void)
{
    plc_model m;
    gpt2(&m, 12, 768, 12);
    CU_ASSERT_EQUAL(plc_tensor_count(&m), 1 + 1 + 16 * 12 + 2);
    CU_ASSERT_EQUAL(plc_model_param_count(&m), 124439808LL);
    plc_tensor_info t;
    const char *layer0[] = {"ln_1.weight", "ln_1.bias", "attn.q.weight", "attn.q.bias", "attn.k.weight",
                            "attn.k.bias", "attn.v.weight", "attn.v.bias", "attn.c_proj.weight",
                            "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                            "mlp.c_proj.weight", "mlp.c_proj.bias"};
    CU_ASSERT_EQUAL(plc_layer_tensors(&m), 16);
    for (int i = 0; i < 16; i++) {
        char want[64];
        snprintf(want, sizeof want, "h.0.%s", layer0[i]);
        CU_ASSERT_FATAL(plc_tensor_get(&m, 2 + i, &t));
        CU_ASSERT_STRING_EQUAL(t.name, want);
        CU_ASSERT_EQUAL(plc_tensor_find(&m, want), 2 + i);
    }
    CU_ASSERT_FATAL(plc_tensor_get(&m, 1, &t));
    CU_ASSERT_STRING_EQUAL(t.name, "wpe.weight");
    CU_ASSERT(t.shape[0] == 1024 && t.shape[1] == 768 && t.init == PLC_INIT_NORMAL && t.weight_decay);
    CU_ASSERT_EQUAL(plc_tensor_id(&m, PLC_ROLE_POS_EMB, 0), 1);
    CU_ASSERT_FATAL(plc_tensor_get(&m, plc_tensor_id(&m, PLC_ROLE_BQ, 3), &t));
    CU_ASSERT(t.ndim == 1 && t.numel == 768 && t.init == PLC_INIT_ZEROS && !t.weight_decay && t.layer == 3);
    CU_ASSERT_FATAL(plc_tensor_get(&m, plc_tensor_id(&m, PLC_ROLE_W_PROJ, 11), &t));
    CU_ASSERT(t.shape[0] == 3072 && t.shape[1] == 768);
    CU_ASSERT_DOUBLE_EQUAL(t.init_std, 0.02 / sqrt(24.0), 1e-15);
    CU_ASSERT_FATAL(plc_tensor_get(&m, plc_tensor_id(&m, PLC_ROLE_MLP_NORM, 5), &t));
    CU_ASSERT(t.init == PLC_INIT_ONES && !t.weight_decay);
    CU_ASSERT_FATAL(plc_tensor_get(&m, 194, &t));
    CU_ASSERT_STRING_EQUAL(t.name, "ln_f.weight");
    CU_ASSERT_FATAL(plc_tensor_get(&m, 195, &t));
    CU_ASSERT_STRING_EQUAL(t.name, "ln_f.bias");
    CU_ASSERT_EQUAL(t.init, PLC_INIT_ZEROS);
    CU_ASSERT_FALSE(plc_tensor_get(&m, 196, &t));
    CU_ASSERT_EQUAL(plc_tensor_id(&m, PLC_ROLE_LM_HEAD, 0), -1);
    CU_ASSERT_EQUAL(plc_tensor_id(&m, PLC_ROLE_W_GATE, 0), -1); /* no Llama roles in a GPT layer */

    /* untied, rotary, GQA, other ffn: the table and the model math agree */
    struct { bool tied; plc_positions pos; int64_t kv, ffn; } v[] = {
        {false, PLC_POS_LEARNED, 12, 3072}, {true, PLC_POS_ROPE, 12, 3072}, {false, PLC_POS_ROPE, 4, 2000},
        {true, PLC_POS_LEARNED, 3, 1000},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        gpt2(&m, 3, 768, 12);
        m.tie_embeddings = v[i].tied; m.positions = v[i].pos; m.kv_heads = v[i].kv; m.ffn_hidden = v[i].ffn;
        CU_ASSERT_EQUAL(plc_model_param_count(&m), plc_params_total(&m));
        CU_ASSERT_EQUAL(plc_tensor_count(&m), 1 + (v[i].pos == PLC_POS_LEARNED) + 16 * 3 + 2 + !v[i].tied);
        if (!v[i].tied) CU_ASSERT_EQUAL(plc_tensor_id(&m, PLC_ROLE_LM_HEAD, 0), plc_tensor_count(&m) - 1);
    }
    /* Llama: 9 a layer, names as before */
    fixture_model(&m, "llama", 2, 64, 160, 4, 2, 100, 16, false);
    CU_ASSERT_EQUAL(plc_model_param_count(&m), plc_params_total(&m));
    CU_ASSERT_EQUAL(plc_tensor_count(&m), 2 + 9 * 2 + 1);
    CU_ASSERT_EQUAL(plc_tensor_find(&m, "final_norm"), 19);
    CU_ASSERT_EQUAL(plc_tensor_id(&m, PLC_ROLE_BQ, 0), -1);
}

void register_test_solver_model_math_gpt(void)
{
    CU_pSuite s = CU_add_suite("model_math_gpt", NULL, NULL);
    CU_add_test(s, "GPT-2 small, medium, large, XL parameter counts", test_gpt2_params);
    CU_add_test(s, "untied, rotary, GQA, ffn variants; Llama unchanged", test_gpt_variants);
    CU_add_test(s, "GPT stage parameters and tensors", test_gpt_stages);
    CU_add_test(s, "GPT-2 small FLOPs per token, PaLM and Megatron forms", test_gpt2_flops);
    CU_add_test(s, "Megatron form against Narayanan et al. Table 1", test_megatron_published);
    CU_add_test(s, "the GPT tensor table: names, shapes, init, counts", test_gpt_tensor_table);
}
