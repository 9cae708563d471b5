/* ckpt_meta.c: the settings, checksums and checks of checkpoint metadata. See ckpt_meta.h. */
#include "runtime/ckpt_meta.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32.h"
#include "common/errmsg.h"
#include "common/parse_num.h"
#include "common/tensors.h"

/* ---- what a resume must agree on ---------------------------------------------
 * The settings that change the model, the data stream or the optimizer,
 * under their spec names. Each is stored as metadata "setting.NAME"; a resume
 * compares them with the plan's (checkpoint.h). */
#define CKPT_SETTINGS(X)                                                              \
    X("model.layers", "%lld", (long long)m->layers)                                 \
    X("model.hidden", "%lld", (long long)m->hidden)                                 \
    X("model.ffn_hidden", "%lld", (long long)m->ffn_hidden)                         \
    X("model.heads", "%lld", (long long)m->heads)                                   \
    X("model.kv_heads", "%lld", (long long)m->kv_heads)                             \
    X("model.vocab", "%lld", (long long)m->vocab)                                   \
    X("model.seq_len", "%lld", (long long)m->seq_len)                               \
    X("model.tie_embeddings", "%s", m->tie_embeddings ? "on" : "off")               \
    X("model.norm_eps", "%s", real_str(rb, m->norm_eps))                                       \
    X("model.rope_theta", "%s", real_str(rb, m->rope_theta))                                   \
    X("train.seed", "%llu", (unsigned long long)t->seed)                            \
    X("train.data", "%s", t->data_path ? t->data_path : "synthetic")                \
    X("train.global_batch", "%lld", (long long)t->global_batch)                     \
    X("train.adamw.beta1", "%s", real_str(rb, t->beta1))                                       \
    X("train.adamw.beta2", "%s", real_str(rb, t->beta2))                                       \
    X("train.adamw.eps", "%s", real_str(rb, t->eps))                                           \
    X("train.adamw.weight_decay", "%s", real_str(rb, t->weight_decay))                         \
    X("train.lr.peak", "%s", real_str(rb, t->lr_peak))                                         \
    X("train.lr.floor", "%s", real_str(rb, t->lr_floor))                                       \
    X("train.lr.warmup", "%lld", (long long)t->warmup_steps)                        \
    X("train.lr.decay_steps", "%lld", (long long)t->decay_steps)                    \
    X("train.grad_clip", "%s", real_str(rb, t->grad_clip))

#define CKPT_NAME(name, fmt, expr) name,
static const char *const ckpt_settings[] = {CKPT_SETTINGS(CKPT_NAME) NULL};
#undef CKPT_NAME
#define CKPT_NSETTINGS ((int)(sizeof ckpt_settings / sizeof ckpt_settings[0]) - 1)

/* the shortest text that reads back as v */
static const char *real_str(char *buf, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 40, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

int plc_ckpt_nsettings(void) { return CKPT_NSETTINGS; }

const char *plc_ckpt_setting_value(const plc_plan *plan, int i, char *out, size_t n)
{
    char rb[40];
    const plc_model *m = &plan->model;
    const plc_train *t = &plan->train;
    int k = 0;
#define CKPT_FORMAT(name, fmt, expr) if (k++ == i) { snprintf(out, n, fmt, expr); return name; }
    CKPT_SETTINGS(CKPT_FORMAT)
#undef CKPT_FORMAT
    snprintf(out, n, "?");
    return "?";
}

int plc_ckpt_setting_known(const char *name)
{
    for (int i = 0; i < CKPT_NSETTINGS; i++)
        if (!strcmp(ckpt_settings[i], name)) return 1;
    return 0;
}

void plc_ckpt_settings_list(char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < CKPT_NSETTINGS && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "", ckpt_settings[i]);
}

/* CRC-32 of the metadata pairs other than its own, sorted by key:
 * key NUL value NUL ... */
static const char *const *sort_keys_of;
static int cmp_pair_idx(const void *a, const void *b)
{
    return strcmp(sort_keys_of[2 * *(const size_t *)a], sort_keys_of[2 * *(const size_t *)b]);
}
uint32_t plc_ckpt_meta_crc(const char **kv, size_t n)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx) return 0;
    for (size_t i = 0; i < n; i++) idx[i] = i;
    sort_keys_of = kv;
    qsort(idx, n, sizeof *idx, cmp_pair_idx);
    uint32_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k = kv[2 * idx[i]], *v = kv[2 * idx[i] + 1];
        if (!strcmp(k, PLC_CKPT_META_CRC_KEY)) continue;
        crc = plc_crc32(crc, k, strlen(k) + 1);
        crc = plc_crc32(crc, v, strlen(v) + 1);
    }
    free(idx);
    return crc;
}

/* The checks of a checkpoint's metadata: its own checksum, then every
 * setting against the plan's (unless allowed to differ). */
int plc_ckpt_check_file(const plc_st_file *f, const plc_plan *plan, const char *path, const char *const *allow,
                        int nallow, int64_t *step, char *err, size_t errlen)
{
    const char *fmt = plc_st_meta_get(f, "format"), *ver = plc_st_meta_get(f, "version");
    if (!fmt || strcmp(fmt, "plc-checkpoint"))
        return plc_fail(err, errlen, "%s: not a plc checkpoint (no metadata format = plc-checkpoint)", path);
    if (!ver || strcmp(ver, PLC_CKPT_VERSION))
        return plc_fail(err, errlen, "%s: a plc checkpoint of version %s; this plrun reads version %s", path,
                        ver ? ver : "(none)", PLC_CKPT_VERSION);
    const char **kv = malloc((f->n_meta ? f->n_meta : 1) * 2 * sizeof *kv);
    if (!kv) return plc_fail(err, errlen, "out of memory");
    for (size_t i = 0; i < f->n_meta; i++) {
        kv[2 * i] = f->meta[i].key;
        kv[2 * i + 1] = f->meta[i].value;
    }
    char want[16];
    snprintf(want, sizeof want, "%08" PRIx32, plc_ckpt_meta_crc(kv, f->n_meta));
    free(kv);
    const char *stored = plc_st_meta_get(f, PLC_CKPT_META_CRC_KEY);
    if (!stored)
        return plc_fail(err, errlen, "%s: the metadata has no checksum (%s): the checkpoint is damaged", path,
                        PLC_CKPT_META_CRC_KEY);
    if (strcmp(stored, want))
        return plc_fail(err, errlen,
                        "%s: the metadata is corrupt (CRC-32 %s stored, %s computed): the checkpoint is damaged",
                        path, stored, want);
    char diff[1024] = "", val[PLC_CKPT_VALUE_MAX], key[64];
    size_t used = 0;
    int ndiff = 0;
    for (int i = 0; i < CKPT_NSETTINGS; i++) {
        snprintf(key, sizeof key, "setting.%s", ckpt_settings[i]);
        const char *theirs = plc_st_meta_get(f, key);
        plc_ckpt_setting_value(plan, i, val, sizeof val);
        if (theirs && !strcmp(theirs, val)) continue;
        int allowed = 0;
        for (int k = 0; k < nallow; k++) allowed |= !strcmp(allow[k], ckpt_settings[i]);
        if (allowed) continue;
        ndiff++;
        if (used < sizeof diff)
            used += (size_t)snprintf(diff + used, sizeof diff - used, "%s%s: checkpoint %s, plan %s",
                                     ndiff > 1 ? "; " : "", ckpt_settings[i], theirs ? theirs : "(none)", val);
    }
    if (ndiff)
        return plc_fail(err, errlen,
                        "%s: the checkpoint was trained with other settings than this plan (%s); resuming would "
                        "silently change the run. Pass --allow-changed SETTING for each change you mean",
                        path, diff);
    const char *st = plc_st_meta_get(f, "step");
    int64_t s;
    if (plc_parse_int(st, 0, INT64_MAX, &s))
        return plc_fail(err, errlen, "%s: bad step '%s' in the metadata", path, st ? st : "(none)");
    *step = s;
    return 0;
}

/* a tensor's bytes against its stored CRC-32 */
int plc_ckpt_check_tensor(const plc_st_file *f, const char *name, const char *path, char *err, size_t errlen)
{
    const plc_st_tensor *t = plc_st_find(f, name);
    if (!t) return 0; /* plc_st_read names it */
    char key[PLC_TENSOR_NAME_MAX + 32];
    snprintf(key, sizeof key, "crc32.%s", name);
    const char *stored = plc_st_meta_get(f, key);
    if (!stored) return plc_fail(err, errlen, "%s: tensor %s has no checksum: the checkpoint is damaged", path, name);
    char got[16];
    snprintf(got, sizeof got, "%08" PRIx32, plc_crc32(0, plc_st_data(f, t), (size_t)(t->end - t->begin)));
    if (strcmp(stored, got))
        return plc_fail(err, errlen,
                        "%s: tensor %s is corrupt (CRC-32 %s stored, %s computed): the checkpoint is damaged",
                        path, name, stored, got);
    return 0;
}

