/* hf_names.c: Hugging Face checkpoints (model.safetensors + config.json) of
 * plc's global tensors. The two role tables below are the one statement of
 * the mapping; docs/checkpoint.md prints them. See hf_names.h. */
#include "runtime/hf_names.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/atomic_file.h"
#include "common/errmsg.h"
#include "kernels/common/bf16.h"
#include "runtime/json.h"
#include "runtime/safetensors.h"

typedef struct hf_row {
    plc_tensor_role role;
    const char *pattern; /* "%lld": the layer */
    plc_hf_transform transform;
    int part; /* COLUMNS: 0 q, 1 k, 2 v */
} hf_row;

/* LlamaForCausalLM's state dict (modeling_llama.py): nn.Linear weights are
 * [out, in]; q_proj and k_proj expect rotate-half RoPE */
static const hf_row llama_rows[] = {
    {PLC_ROLE_TOK_EMB, "model.embed_tokens.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_ATTN_NORM, "model.layers.%lld.input_layernorm.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_WQ, "model.layers.%lld.self_attn.q_proj.weight", PLC_HF_ROPE, 0},
    {PLC_ROLE_WK, "model.layers.%lld.self_attn.k_proj.weight", PLC_HF_ROPE, 0},
    {PLC_ROLE_WV, "model.layers.%lld.self_attn.v_proj.weight", PLC_HF_TRANSPOSE, 0},
    {PLC_ROLE_WO, "model.layers.%lld.self_attn.o_proj.weight", PLC_HF_TRANSPOSE, 0},
    {PLC_ROLE_MLP_NORM, "model.layers.%lld.post_attention_layernorm.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_W_GATE, "model.layers.%lld.mlp.gate_proj.weight", PLC_HF_TRANSPOSE, 0},
    {PLC_ROLE_W_UP, "model.layers.%lld.mlp.up_proj.weight", PLC_HF_TRANSPOSE, 0},
    {PLC_ROLE_W_DOWN, "model.layers.%lld.mlp.down_proj.weight", PLC_HF_TRANSPOSE, 0},
    {PLC_ROLE_FINAL_NORM, "model.norm.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_LM_HEAD, "lm_head.weight", PLC_HF_TRANSPOSE, 0},
};

/* GPT2LMHeadModel's (modeling_gpt2.py): Conv1D weights are [in, out] as
 * plc's; c_attn fuses q, k, v by columns */
static const hf_row gpt_rows[] = {
    {PLC_ROLE_TOK_EMB, "transformer.wte.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_POS_EMB, "transformer.wpe.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_ATTN_NORM, "transformer.h.%lld.ln_1.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_ATTN_NORM_B, "transformer.h.%lld.ln_1.bias", PLC_HF_COPY, 0},
    {PLC_ROLE_WQ, "transformer.h.%lld.attn.c_attn.weight", PLC_HF_COLUMNS, 0},
    {PLC_ROLE_WK, "transformer.h.%lld.attn.c_attn.weight", PLC_HF_COLUMNS, 1},
    {PLC_ROLE_WV, "transformer.h.%lld.attn.c_attn.weight", PLC_HF_COLUMNS, 2},
    {PLC_ROLE_BQ, "transformer.h.%lld.attn.c_attn.bias", PLC_HF_COLUMNS, 0},
    {PLC_ROLE_BK, "transformer.h.%lld.attn.c_attn.bias", PLC_HF_COLUMNS, 1},
    {PLC_ROLE_BV, "transformer.h.%lld.attn.c_attn.bias", PLC_HF_COLUMNS, 2},
    {PLC_ROLE_WO, "transformer.h.%lld.attn.c_proj.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_BO, "transformer.h.%lld.attn.c_proj.bias", PLC_HF_COPY, 0},
    {PLC_ROLE_MLP_NORM, "transformer.h.%lld.ln_2.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_MLP_NORM_B, "transformer.h.%lld.ln_2.bias", PLC_HF_COPY, 0},
    {PLC_ROLE_W_FC, "transformer.h.%lld.mlp.c_fc.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_B_FC, "transformer.h.%lld.mlp.c_fc.bias", PLC_HF_COPY, 0},
    {PLC_ROLE_W_PROJ, "transformer.h.%lld.mlp.c_proj.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_B_PROJ, "transformer.h.%lld.mlp.c_proj.bias", PLC_HF_COPY, 0},
    {PLC_ROLE_FINAL_NORM, "transformer.ln_f.weight", PLC_HF_COPY, 0},
    {PLC_ROLE_FINAL_NORM_B, "transformer.ln_f.bias", PLC_HF_COPY, 0},
    {PLC_ROLE_LM_HEAD, "lm_head.weight", PLC_HF_TRANSPOSE, 0},
};
#define NROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* the prefix a GPT-2 checkpoint saved from GPT2Model (the original `gpt2`
 * upload among them) leaves out; the reader accepts both spellings */
#define GPT_PREFIX "transformer."

static const hf_row *rows_of(plc_arch arch, int *n)
{
    *n = arch == PLC_ARCH_GPT ? NROWS(gpt_rows) : NROWS(llama_rows);
    return arch == PLC_ARCH_GPT ? gpt_rows : llama_rows;
}

const char *plc_hf_transform_name(plc_hf_transform t)
{
    static const char *const names[] = {"copy", "transpose", "rope", "columns"}; /* docs/checkpoint.md's words */
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

bool plc_hf_table_row(plc_arch arch, int row, plc_tensor_role *role, const char **pattern, plc_hf_transform *t)
{
    int n;
    const hf_row *rows = rows_of(arch, &n);
    if (row < 0 || row >= n) return false;
    *role = rows[row].role;
    *pattern = rows[row].pattern;
    *t = rows[row].transform;
    return true;
}

int plc_hf_supported(const plc_model *m, char *err, size_t errlen)
{
    if (m->heads <= 0 || m->hidden % m->heads)
        return plc_fail(err, errlen, "heads (%lld) must divide hidden (%lld)", (long long)m->heads,
                        (long long)m->hidden);
    int64_t hd = m->hidden / m->heads;
    if (m->arch == PLC_ARCH_GPT) {
        if (m->positions != PLC_POS_LEARNED)
            return plc_fail(err, errlen, "a GPT block with RoPE positions has no Hugging Face GPT-2 counterpart "
                                         "(GPT2Config has learned positions only)");
        if (m->kv_heads != m->heads)
            return plc_fail(err, errlen, "a GPT block with kv_heads (%lld) < heads (%lld) has no Hugging Face GPT-2 "
                                         "counterpart (GPT2Config has no grouped-query attention)",
                            (long long)m->kv_heads, (long long)m->heads);
    } else if (hd % 2) {
        return plc_fail(err, errlen, "the head dimension %lld is odd: RoPE needs pairs", (long long)hd);
    }
    return 0;
}

bool plc_hf_place_of(const plc_model *m, int64_t id, plc_hf_place *p)
{
    plc_tensor_info ti;
    if (!plc_tensor_get(m, id, &ti)) return false;
    int n;
    const hf_row *rows = rows_of(m->arch, &n), *row = NULL;
    for (int i = 0; i < n && !row; i++)
        if (rows[i].role == ti.role) row = &rows[i];
    if (!row) return false;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, row->pattern, (long long)ti.layer);
    p->transform = row->transform;
    p->rows = ti.shape[0];
    p->cols = ti.ndim == 1 ? 1 : ti.shape[1];
    p->ndim = ti.ndim;
    p->shape[0] = ti.shape[0];
    p->shape[1] = ti.ndim == 1 ? 1 : ti.shape[1];
    p->hd = m->heads > 0 ? m->hidden / m->heads : 0;
    if (row->transform == PLC_HF_TRANSPOSE || row->transform == PLC_HF_ROPE) {
        p->shape[0] = p->cols;
        p->shape[1] = p->rows;
    } else if (row->transform == PLC_HF_COLUMNS) {
        int64_t q = m->heads * p->hd, kv = m->kv_heads * p->hd;
        p->col0 = row->part == 0 ? 0 : row->part == 1 ? q : q + kv;
        if (ti.ndim == 1) p->shape[0] = q + 2 * kv;
        else p->shape[1] = q + 2 * kv;
    }
    return true;
}

int64_t plc_hf_index(const plc_hf_place *p, int64_t r, int64_t c)
{
    switch (p->transform) {
    case PLC_HF_TRANSPOSE: return c * p->rows + r;
    case PLC_HF_ROPE: {
        /* column c = head * hd + 2 i + j (pair i, member j) -> row head * hd + j * hd/2 + i */
        int64_t head = c / p->hd, w = c % p->hd, i = w / 2, j = w % 2;
        return (head * p->hd + j * (p->hd / 2) + i) * p->rows + r;
    }
    case PLC_HF_COLUMNS:
        if (p->ndim == 1) return p->col0 + r;
        return r * p->shape[1] + p->col0 + c;
    case PLC_HF_COPY: break;
    }
    return r * p->cols + c;
}

/* ---- config.json ------------------------------------------------------------ */

typedef struct cfg_int {
    const char *key;
    int64_t value;
} cfg_int;

/* the integer keys of LlamaConfig or GPT2Config that give the model's
 * shape: written, and compared when reading; 0 when out of entries */
static int config_ints(const plc_model *m, cfg_int out[8])
{
    int64_t hd = m->heads > 0 ? m->hidden / m->heads : 0;
    if (m->arch == PLC_ARCH_GPT) {
        cfg_int g[] = {{"n_embd", m->hidden},     {"n_layer", m->layers},     {"n_head", m->heads},
                       {"n_inner", m->ffn_hidden}, {"vocab_size", m->vocab},  {"n_positions", m->seq_len},
                       {"n_ctx", m->seq_len}};
        memcpy(out, g, sizeof g);
        return NROWS(g);
    }
    cfg_int l[] = {{"hidden_size", m->hidden},       {"intermediate_size", m->ffn_hidden},
                   {"num_hidden_layers", m->layers}, {"num_attention_heads", m->heads},
                   {"num_key_value_heads", m->kv_heads}, {"head_dim", hd},
                   {"vocab_size", m->vocab},         {"max_position_embeddings", m->seq_len}};
    memcpy(out, l, sizeof l);
    return NROWS(l);
}

/* the shortest decimal that reads back as x */
static void real_text(double x, char *buf, size_t n)
{
    if (x == floor(x) && fabs(x) < 1e15) { /* 10000.0, as Python writes it */
        snprintf(buf, n, "%.1f", x);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) return;
    }
}

static void write_config(FILE *f, const plc_model *m)
{
    const int gpt = m->arch == PLC_ARCH_GPT;
    char eps[32], theta[32];
    real_text(m->norm_eps, eps, sizeof eps);
    real_text(m->rope_theta, theta, sizeof theta);
    fprintf(f, "{\n  \"architectures\": [\"%s\"],\n  \"model_type\": \"%s\",\n",
            gpt ? "GPT2LMHeadModel" : "LlamaForCausalLM", gpt ? "gpt2" : "llama");
    cfg_int c[8];
    int n = config_ints(m, c);
    for (int i = 0; i < n; i++) fprintf(f, "  \"%s\": %lld,\n", c[i].key, (long long)c[i].value);
    if (gpt)
        fprintf(f, "  \"layer_norm_epsilon\": %s,\n  \"activation_function\": \"gelu_new\",\n"
                   "  \"resid_pdrop\": 0.0,\n  \"embd_pdrop\": 0.0,\n  \"attn_pdrop\": 0.0,\n"
                   "  \"scale_attn_weights\": true,\n",
                eps);
    else
        fprintf(f, "  \"rms_norm_eps\": %s,\n  \"rope_theta\": %s,\n  \"hidden_act\": \"silu\",\n"
                   "  \"attention_bias\": false,\n  \"mlp_bias\": false,\n  \"attention_dropout\": 0.0,\n",
                eps, theta);
    fprintf(f, "  \"tie_word_embeddings\": %s,\n  \"torch_dtype\": \"float32\"\n}\n",
            m->tie_embeddings ? "true" : "false");
}

/* The settings of config.json besides the shape that change what the
 * weights compute: each present one must be plc's. 0, or -1 with err. */
static int check_config_settings(const plc_json *root, const plc_model *m, const char *path, char *err, size_t errlen)
{
    const int gpt = m->arch == PLC_ARCH_GPT;
    const struct { const char *key, *spec_key; double value; } reals[] = {
        {gpt ? "layer_norm_epsilon" : "rms_norm_eps", "model.norm_eps", m->norm_eps},
        {gpt ? NULL : "rope_theta", "model.rope_theta", m->rope_theta},
    };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        const plc_json *v = reals[i].key ? plc_json_get(root, reals[i].key) : NULL;
        if (v && v->type == PLC_JSON_NUMBER && fabs(v->number - reals[i].value) > 1e-9 * fabs(reals[i].value))
            return plc_fail(err, errlen, "%s: %s is %g; this plan's model has %s = %g", path, reals[i].key,
                            v->number, reals[i].spec_key, reals[i].value);
    }
    const plc_json *v = plc_json_get(root, "tie_word_embeddings");
    if (v && v->type == PLC_JSON_BOOL && v->boolean != m->tie_embeddings)
        return plc_fail(err, errlen, "%s: tie_word_embeddings is %s; this plan's model has model.tie_embeddings = %s",
                        path, v->boolean ? "true" : "false", m->tie_embeddings ? "true" : "false");
    /* what plc's block does not compute */
    const char *act_key = gpt ? "activation_function" : "hidden_act";
    v = plc_json_get(root, act_key);
    if (v && v->type == PLC_JSON_STRING &&
        (gpt ? strcmp(v->str, "gelu_new") && strcmp(v->str, "gelu_pytorch_tanh") : strcmp(v->str, "silu")))
        return plc_fail(err, errlen, "%s: %s is \"%s\"; plc's %s block computes %s", path, act_key, v->str,
                        gpt ? "GPT" : "Llama", gpt ? "the tanh GELU (gelu_new)" : "SiLU (silu)");
    static const char *const llama_off[] = {"attention_bias", "mlp_bias"};
    for (size_t i = 0; !gpt && i < sizeof llama_off / sizeof llama_off[0]; i++) {
        v = plc_json_get(root, llama_off[i]);
        if (v && v->type == PLC_JSON_BOOL && v->boolean)
            return plc_fail(err, errlen, "%s: %s is true; plc's Llama block has no biases", path, llama_off[i]);
    }
    v = plc_json_get(root, "rope_scaling");
    if (!gpt && v && v->type != PLC_JSON_NULL)
        return plc_fail(err, errlen, "%s: rope_scaling is set; plc's RoPE has no scaling (docs/model.md), so the "
                                     "weights would compute another model", path);
    return 0;
}

/* config.json beside a checkpoint, when there is one: its model type,
 * shape keys and settings against the model's */
static int check_config(const plc_model *m, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            char *t = realloc(text, cap = 2 * cap + 8192);
            if (!t) { free(text); fclose(f); return plc_fail(err, errlen, "%s: out of memory", path); }
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    fclose(f);
    plc_arena a;
    plc_arena_init(&a);
    const plc_json *root;
    char msg[256] = "the top level is not an object";
    int rc = 0;
    if (plc_json_parse(&a, text, len, &root, msg, sizeof msg) || root->type != PLC_JSON_OBJECT) {
        rc = plc_fail(err, errlen, "%s: not a Hugging Face config (%s)", path, msg);
    } else {
        const char *want = m->arch == PLC_ARCH_GPT ? "gpt2" : "llama";
        const plc_json *mt = plc_json_get(root, "model_type");
        if (mt && mt->type == PLC_JSON_STRING && strcmp(mt->str, want))
            rc = plc_fail(err, errlen, "%s: model_type is \"%s\"; this plan's model is %s (\"%s\")", path, mt->str,
                          m->arch == PLC_ARCH_GPT ? "a GPT block" : "a Llama block", want);
        cfg_int c[8];
        int n = config_ints(m, c);
        for (int i = 0; i < n && !rc; i++) {
            const plc_json *v = plc_json_get(root, c[i].key);
            if (!v || v->type == PLC_JSON_NULL) continue; /* a default of the config class */
            if (!v->is_int || v->integer != c[i].value)
                rc = plc_fail(err, errlen, "%s: %s is %g; this plan's model has %lld", path, c[i].key, v->number,
                              (long long)c[i].value);
        }
        if (!rc) rc = check_config_settings(root, m, path, err, errlen);
    }
    plc_arena_free(&a);
    free(text);
    return rc;
}

/* ---- writing ------------------------------------------------------------------ */

int plc_hf_write(const plc_model *m, const float *const *w, const char *dir, char *err, size_t errlen)
{
    if (plc_hf_supported(m, err, errlen)) return -1;
    if (plc_prepare_output_dir("--export-hf", dir, err, errlen)) return -1;
    int64_t nt = plc_tensor_count(m);
    /* the Hugging Face tensors in order of first use; each plc tensor's slot */
    plc_hf_place *pl = calloc((size_t)nt, sizeof *pl);
    float **hf = calloc((size_t)nt, sizeof *hf);
    int64_t *slot = calloc((size_t)nt, sizeof *slot);
    int rc = 0;
    if (!pl || !hf || !slot) rc = plc_fail(err, errlen, "out of memory");
    for (int64_t id = 0; id < nt && !rc; id++) {
        plc_hf_place_of(m, id, &pl[id]);
        slot[id] = id;
        for (int64_t j = 0; j < id; j++)
            if (!strcmp(pl[j].name, pl[id].name)) { slot[id] = slot[j]; break; }
        if (slot[id] == id && !(hf[id] = calloc((size_t)(pl[id].shape[0] * pl[id].shape[1]), sizeof(float))))
            rc = plc_fail(err, errlen, "out of memory");
    }
    for (int64_t id = 0; id < nt && !rc; id++) {
        const plc_hf_place *p = &pl[id];
        float *dst = hf[slot[id]];
        for (int64_t r = 0; r < p->rows; r++)
            for (int64_t c = 0; c < p->cols; c++) dst[plc_hf_index(p, r, c)] = w[id][r * p->cols + c];
    }
    plc_st_writer wr;
    plc_st_writer_init(&wr);
    for (int64_t id = 0; id < nt && !rc; id++)
        if (slot[id] == id)
            rc = plc_st_writer_add(&wr, pl[id].name, PLC_ST_F32, pl[id].ndim, pl[id].shape, hf[id], err, errlen);
    plc_st_writer_meta(&wr, "format", "pt"); /* what transformers' save_pretrained writes */
    char path[4096];
    if (!rc) {
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        rc = plc_st_writer_save(&wr, path, err, errlen);
    }
    if (!rc) {
        snprintf(path, sizeof path, "%s/config.json", dir);
        plc_atomic_file af;
        rc = plc_atomic_open(&af, path, err, errlen);
        if (!rc) {
            write_config(af.f, m);
            rc = plc_atomic_commit(&af, err, errlen);
        }
    }
    plc_st_writer_free(&wr);
    for (int64_t id = 0; hf && id < nt; id++) free(hf[id]);
    free(hf);
    free(pl);
    free(slot);
    return rc;
}

/* ---- reading ------------------------------------------------------------------ */

/* IEEE half to float, exactly */
static float half_to_f32(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, f = h & 1023;
    float v;
    if (e == 0) v = ldexpf((float)f, -24);
    else if (e == 31) v = f ? NAN : INFINITY;
    else v = ldexpf((float)(f | 1024), e - 25);
    return s ? -v : v;
}

static float element(const plc_st_tensor *t, const uint8_t *base, int64_t i)
{
    if (t->dtype == PLC_ST_F32) {
        float v;
        memcpy(&v, base + 4 * i, 4);
        return v;
    }
    uint16_t h;
    memcpy(&h, base + 2 * i, 2);
    return t->dtype == PLC_ST_BF16 ? plc_bf16_to_f32(h) : half_to_f32(h);
}

static void shape_text(char *buf, size_t n, int ndim, const int64_t *shape)
{
    if (ndim == 1) snprintf(buf, n, "[%lld]", (long long)shape[0]);
    else if (ndim == 2) snprintf(buf, n, "[%lld, %lld]", (long long)shape[0], (long long)shape[1]);
    else snprintf(buf, n, "(%d dimensions)", ndim);
}

static int read_tensors(const plc_model *m, const plc_st_file *f, const char *path, float *const *w, char *err,
                        size_t errlen)
{
    int64_t nt = plc_tensor_count(m);
    for (int64_t id = 0; id < nt; id++) {
        plc_hf_place p;
        plc_tensor_info ti;
        plc_hf_place_of(m, id, &p);
        plc_tensor_get(m, id, &ti);
        const plc_st_tensor *t = plc_st_find(f, p.name);
        if (!t && !strncmp(p.name, GPT_PREFIX, strlen(GPT_PREFIX))) t = plc_st_find(f, p.name + strlen(GPT_PREFIX));
        if (!t) {
            if (ti.role == PLC_ROLE_LM_HEAD)
                return plc_fail(err, errlen, "%s: no tensor %s: the checkpoint ties its embeddings, and this plan's "
                                             "model does not (model.tie_embeddings = false)", path, p.name);
            return plc_fail(err, errlen, "%s: no tensor %s (plc's %s): not a Hugging Face %s checkpoint of this model",
                            path, p.name, ti.name, m->arch == PLC_ARCH_GPT ? "GPT-2" : "Llama");
        }
        char got[48], want[48];
        shape_text(got, sizeof got, t->ndim, t->shape);
        shape_text(want, sizeof want, p.ndim, p.shape);
        if (t->ndim != p.ndim || t->shape[0] != p.shape[0] || (p.ndim == 2 && t->shape[1] != p.shape[1]))
            return plc_fail(err, errlen, "%s: tensor %s has shape %s; this plan's model needs %s (plc's %s)", path,
                            p.name, got, want, ti.name);
        if (t->dtype != PLC_ST_F32 && t->dtype != PLC_ST_BF16 && t->dtype != PLC_ST_F16)
            return plc_fail(err, errlen, "%s: tensor %s is %s; plrun reads F32, BF16 and F16", path, p.name,
                            plc_st_dtype_name(t->dtype));
        const uint8_t *base = plc_st_data(f, t);
        for (int64_t r = 0; r < p.rows; r++)
            for (int64_t c = 0; c < p.cols; c++) w[id][r * p.cols + c] = element(t, base, plc_hf_index(&p, r, c));
    }
    return 0;
}

int plc_hf_read(const plc_model *m, const char *path, float *const *w, char *err, size_t errlen)
{
    if (plc_hf_supported(m, err, errlen)) return -1;
    char file[4096], config[4096];
    struct stat st;
    if (stat(path, &st) != 0) return plc_fail(err, errlen, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        snprintf(file, sizeof file, "%s/model.safetensors", path);
        snprintf(config, sizeof config, "%s/config.json", path);
        if (stat(file, &st) != 0) {
            snprintf(config, sizeof config, "%s/model.safetensors.index.json", path);
            if (stat(config, &st) == 0)
                return plc_fail(err, errlen, "%s: a checkpoint sharded over several files; plrun reads one "
                                             "model.safetensors (merge the shards first)", path);
            return plc_fail(err, errlen, "%s: no model.safetensors in the directory", path);
        }
    } else {
        snprintf(file, sizeof file, "%s", path);
        const char *slash = strrchr(path, '/');
        snprintf(config, sizeof config, "%.*sconfig.json", slash ? (int)(slash - path + 1) : 0, path);
    }
    if (check_config(m, config, err, errlen)) return -1;
    plc_st_file f;
    if (plc_st_open(&f, file, err, errlen)) return -1;
    int rc = read_tensors(m, &f, file, w, err, errlen);
    plc_st_close(&f);
    return rc;
}
