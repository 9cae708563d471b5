/* data_export.c: files written from the data sources, for the PyTorch
 * oracle (token batches, configuration) and for token-file runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "runtime/data.h"
#include "runtime/safetensors.h"
#include "runtime/synthetic.h"
#include "runtime/tokfile.h"

int plc_data_export_batches(const plc_data *d, const char *path, int64_t steps, int64_t global_batch,
                            const char *config_json, char *err, size_t errlen)
{
    int64_t S = plc_data_seq_len(d);
    if (steps < 0 || global_batch < 1) return plc_fail(err, errlen, "%s: bad step count or batch size", path);
    size_t per = (size_t)(global_batch * S);
    int32_t *buf = malloc(sizeof(int32_t) * per * 2 * (size_t)(steps ? steps : 1));
    if (!buf) return plc_fail(err, errlen, "%s: out of memory for %lld steps of batches", path, (long long)steps);
    plc_st_writer w;
    plc_st_writer_init(&w);
    int rc = 0;
    int64_t shape[2] = {global_batch, S};
    for (int64_t s = 0; s < steps && rc == 0; s++) {
        int32_t *tok = buf + (size_t)s * 2 * per, *tgt = tok + per;
        char name[2][64];
        snprintf(name[0], sizeof name[0], "step%lld.tokens", (long long)s);
        snprintf(name[1], sizeof name[1], "step%lld.targets", (long long)s);
        rc = plc_data_fetch(d, s, global_batch, 0, global_batch, 0, S, tok, tgt, err, errlen);
        if (rc == 0) rc = plc_st_writer_add(&w, name[0], PLC_ST_I32, 2, shape, tok, err, errlen);
        if (rc == 0) rc = plc_st_writer_add(&w, name[1], PLC_ST_I32, 2, shape, tgt, err, errlen);
    }
    if (rc == 0 && config_json) plc_st_writer_meta(&w, "config", config_json);
    if (rc == 0) rc = plc_st_writer_save(&w, path, err, errlen);
    plc_st_writer_free(&w);
    free(buf);
    return rc;
}

char *plc_oracle_config_json(const plc_model *m, const plc_train *t, int64_t steps)
{
    const char *fmt = "{\"layers\":%lld,\"hidden\":%lld,\"ffn_hidden\":%lld,\"heads\":%lld,\"kv_heads\":%lld,"
                      "\"vocab\":%lld,\"seq_len\":%lld,\"tie_embeddings\":%s,\"norm_eps\":%.17g,"
                      "\"rope_theta\":%.17g,\"global_batch\":%lld,\"beta1\":%.17g,\"beta2\":%.17g,\"eps\":%.17g,"
                      "\"weight_decay\":%.17g,\"lr_peak\":%.17g,\"lr_floor\":%.17g,\"warmup_steps\":%lld,"
                      "\"decay_steps\":%lld,\"grad_clip\":%.17g,\"steps\":%lld,\"arch\":\"%s\",\"positions\":\"%s\"}";
#define PLC_CONFIG_ARGS                                                                                        \
    (long long)m->layers, (long long)m->hidden, (long long)m->ffn_hidden, (long long)m->heads,               \
        (long long)m->kv_heads, (long long)m->vocab, (long long)m->seq_len,                                  \
        m->tie_embeddings ? "true" : "false", m->norm_eps, m->rope_theta, (long long)t->global_batch,        \
        t->beta1, t->beta2, t->eps, t->weight_decay, t->lr_peak, t->lr_floor, (long long)t->warmup_steps,    \
        (long long)t->decay_steps, t->grad_clip, (long long)steps,                                           \
        plc_arch_names[m->arch], plc_positions_names[m->positions] /* in range: the loader checks */
    /* a mixture-of-experts model's keys, before the closing brace (none for a dense one) */
    const plc_moe *e = &m->moe;
    char moe[512] = "";
    if (e->experts > 0)
        snprintf(moe, sizeof moe,
                 ",\"experts\":%lld,\"experts_per_token\":%lld,\"shared_experts\":%lld,\"expert_ffn_hidden\":%lld,"
                 "\"shared_expert_ffn_hidden\":%lld,\"dense_layers\":%lld,\"moe_every\":%lld,\"router\":\"%s\","
                 "\"route_scale\":%.17g,\"aux_loss\":%.17g",
                 (long long)e->experts, (long long)e->top_k, (long long)e->shared_experts,
                 (long long)e->expert_ffn_hidden, (long long)e->shared_ffn_hidden, (long long)e->dense_layers,
                 (long long)(e->moe_every > 0 ? e->moe_every : 1), e->router == PLC_ROUTER_SIGMOID ? "sigmoid" : "softmax",
                 e->route_scale, e->aux_loss);
    int n = snprintf(NULL, 0, fmt, PLC_CONFIG_ARGS);
    size_t extra = strlen(moe);
    char *s = n >= 0 ? malloc((size_t)n + extra + 1) : NULL;
    if (s) {
        snprintf(s, (size_t)n + 1, fmt, PLC_CONFIG_ARGS);
        memcpy(s + n - 1, moe, extra);
        memcpy(s + n - 1 + extra, "}", 2);
    }
#undef PLC_CONFIG_ARGS
    return s;
}

int plc_synthetic_write_tokens(const char *path, int64_t vocab, uint64_t seed, uint64_t n_tokens, char *err,
                               size_t errlen)
{
    plc_markov mc;
    if (plc_markov_build(&mc, vocab, PLC_SYNTH_SUCCESSORS, seed, err, errlen)) return -1;
    int32_t *seq = malloc(sizeof(int32_t) * (size_t)(n_tokens ? n_tokens : 1));
    if (!seq) {
        plc_markov_free(&mc);
        return plc_fail(err, errlen, "%s: out of memory for %llu tokens", path, (unsigned long long)n_tokens);
    }
    plc_markov_sample(&mc, seed, 0, (int64_t)n_tokens, seq);
    plc_markov_free(&mc);
    /* int32 ids in [0, vocab) are the same values as uint32 */
    int rc = plc_tokfile_write(path, (const uint32_t *)(const void *)seq, n_tokens, vocab <= 65536 ? 2 : 4,
                               (uint32_t)vocab, err, errlen);
    free(seq);
    return rc;
}
