/* checkpoint.c: gathering shards into global tensors, and back. See checkpoint.h. */
#include "runtime/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32.h"
#include "common/errmsg.h"
#include "common/parse_num.h"
#include "common/tensors.h"
#include "kernels/common/bf16.h"
#include "common/atomic_file.h"
#include "runtime/ckpt_meta.h"
#include "runtime/data.h"
#include "runtime/hf_names.h"
#include "runtime/safetensors.h"
#include "runtime/shard.h"

#define CKPT_TAG 9100

static const plc_program *program_of(const plc_plan *plan, int64_t rank, plc_rank_coords *co)
{
    *co = plc_rank_to_coords(&plan->layout, rank);
    return &plan->programs[plan->stage_program[co->pp]];
}

static int is_flat(const plc_buffer *b) { return b->shard == PLC_SHARD_FLAT || b->flat_shards > 1; }

/* n elements of a buffer stored as dt, to and from fp32 on the host (bf16
 * is widened exactly, and rounded to nearest even on the way back) */
static int download_f32(plc_backend *be, float *host, const void *src, plc_dtype dt, int64_t n)
{
    if (dt != PLC_BF16) return be->ops->download(be, host, src, (size_t)n * sizeof(float));
    uint16_t *half = malloc((size_t)(n > 0 ? n : 1) * sizeof *half);
    if (!half) return plc_backend_fail(be, "out of memory");
    int rc = be->ops->download(be, half, src, (size_t)n * sizeof *half);
    for (int64_t i = 0; !rc && i < n; i++) host[i] = plc_bf16_to_f32(half[i]);
    free(half);
    return rc;
}
static int upload_f32(plc_backend *be, void *dst, const float *host, plc_dtype dt, int64_t n)
{
    if (dt != PLC_BF16) return be->ops->upload(be, dst, host, (size_t)n * sizeof(float));
    uint16_t *half = malloc((size_t)(n > 0 ? n : 1) * sizeof *half);
    if (!half) return plc_backend_fail(be, "out of memory");
    for (int64_t i = 0; i < n; i++) half[i] = plc_f32_to_bf16(host[i]);
    int rc = be->ops->upload(be, dst, half, (size_t)n * sizeof *half);
    free(half);
    return rc;
}

static int same_region(const plc_shard_region *a, const plc_shard_region *b)
{
    return a->row0 == b->row0 && a->rows == b->rows && a->col0 == b->col0 && a->cols == b->cols &&
           a->flat == b->flat && (!a->flat || (a->e0 == b->e0 && a->n == b->n));
}

int plc_ckpt_gather_tensor(plc_executor *x, plc_comm *comm, const plc_plan *plan, plc_buf_kind kind,
                           int64_t tensor, float *out, int *found, char *err, size_t errlen)
{
    plc_tensor_info ti;
    *found = 0;
    if (!plc_tensor_get(&plan->model, tensor, &ti)) return plc_fail(err, errlen, "no tensor %lld", (long long)tensor);
    const int64_t R = ti.shape[0], C = ti.shape[1];

    /* every rank walks the same plan, so all agree on who sends what */
    int prefer_flat = 0;
    for (uint32_t p = 0; p < plan->nprograms; p++)
        for (uint32_t b = 0; b < plan->programs[p].nbuffers; b++) {
            const plc_buffer *buf = &plan->programs[p].buffers[b];
            if (buf->kind == kind && buf->tensor == tensor) {
                *found = 1;
                if (is_flat(buf)) prefer_flat = 1;
            }
        }
    if (!*found) return 0;

    size_t nseen = 0, capseen = 16;
    plc_shard_region *seen = malloc(capseen * sizeof *seen);
    float *local = NULL;
    int64_t covered = 0, whole = 0;
    int rc = 0, tag = CKPT_TAG;
    if (!seen) return plc_fail(err, errlen, "out of memory");
    plc_backend *be = plc_exec_backend(x);
    for (int64_t r = 0; r < plan->world_size && rc == 0 && !whole; r++) {
        plc_rank_coords co;
        const plc_program *prog = program_of(plan, r, &co);
        for (uint32_t b = 0; b < prog->nbuffers && rc == 0 && !whole; b++) {
            const plc_buffer *buf = &prog->buffers[b];
            if (buf->kind != kind || buf->tensor != tensor || is_flat(buf) != prefer_flat) continue;
            plc_shard_region reg;
            if (plc_shard_region_of(buf, &plan->layout, co, R, C, &reg, err, errlen)) { rc = -1; break; }
            int dup = 0;
            for (size_t i = 0; i < nseen; i++) dup |= same_region(&seen[i], &reg);
            if (dup) continue;
            if (nseen == capseen) {
                plc_shard_region *s = realloc(seen, 2 * capseen * sizeof *s);
                if (!s) { rc = plc_fail(err, errlen, "out of memory"); break; }
                seen = s;
                capseen *= 2;
            }
            seen[nseen++] = reg;
            int64_t n = reg.stored;
            covered += reg.real;
            if (!reg.flat && reg.rows == R && reg.cols == C) whole = 1;
            if (r != comm->rank && comm->rank != 0) continue; /* neither owner nor receiver */
            float *tmp = realloc(local, (size_t)(n > 0 ? n : 1) * sizeof *tmp);
            if (!tmp) { rc = plc_fail(err, errlen, "out of memory"); break; }
            local = tmp;
            if (r == comm->rank) {
                /* this rank owns the shard: its buffer, in backend memory */
                if (download_f32(be, local, plc_exec_buffer(x, (int32_t)b), buf->dtype, n)) {
                    rc = plc_fail(err, errlen, "rank %d: %s", comm->rank, be->error);
                    break;
                }
                if (comm->rank != 0 && plc_comm_send_bytes(comm, local, (size_t)n * sizeof(float), 0, tag)) {
                    rc = plc_fail(err, errlen, "rank %d: sending a shard of %s: %s", comm->rank, ti.name, comm->error);
                    break;
                }
            } else if (plc_comm_recv_bytes(comm, local, (size_t)n * sizeof(float), (int)r, tag)) {
                rc = plc_fail(err, errlen, "rank 0: receiving a shard of %s: %s", ti.name, comm->error);
                break;
            }
            if (comm->rank == 0) plc_shard_gather(out, local, &reg, C);
        }
    }
    free(local);
    free(seen);
    if (rc == 0 && !whole && covered != R * C)
        rc = plc_fail(err, errlen, "the %s buffers of %s cover %lld of its %lld elements",
                      plc_buf_kind_name(kind), ti.name, (long long)covered, (long long)(R * C));
    return rc;
}


/* metadata of a checkpoint under construction (rank 0): copies */
typedef struct meta_list {
    const char **kv; /* key, value, key, value, ... */
    size_t n, cap;
    int oom;
} meta_list;
static void meta_add(meta_list *l, const char *k, const char *v)
{
    if (l->oom) return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        const char **kv = realloc(l->kv, 2 * cap * sizeof *kv);
        if (!kv) { l->oom = 1; return; }
        l->kv = kv;
        l->cap = cap;
    }
    char *kc = strdup(k), *vc = strdup(v);
    if (!kc || !vc) { free(kc); free(vc); l->oom = 1; return; }
    l->kv[2 * l->n] = kc;
    l->kv[2 * l->n + 1] = vc;
    l->n++;
}
static void meta_free(meta_list *l)
{
    for (size_t i = 0; i < 2 * l->n; i++) free((void *)l->kv[i]);
    free(l->kv);
    memset(l, 0, sizeof *l);
}
static void tensor_crc_meta(meta_list *l, const char *name, const float *data, int64_t numel)
{
    char key[PLC_TENSOR_NAME_MAX + 32], val[16];
    snprintf(key, sizeof key, "crc32.%s", name);
    snprintf(val, sizeof val, "%08" PRIx32, plc_crc32(0, data, (size_t)numel * sizeof(float)));
    meta_add(l, key, val);
}

/* Adds tensors of `kind` (all of them) to the writer on rank 0, under
 * prefix + NAME. The data stays alive in *bufs until the writer saves. */
static int add_kind(plc_executor *x, plc_comm *comm, const plc_plan *plan, plc_buf_kind kind,
                    const char *prefix, plc_st_writer *w, meta_list *crcs, float **bufs, int required,
                    char *err, size_t errlen)
{
    int64_t nt = plc_tensor_count(&plan->model);
    for (int64_t t = 0; t < nt; t++) {
        plc_tensor_info ti;
        plc_tensor_get(&plan->model, t, &ti);
        float *g = NULL;
        if (comm->rank == 0) {
            g = calloc((size_t)ti.numel, sizeof *g);
            if (!g) return plc_fail(err, errlen, "out of memory");
            bufs[t] = g;
        }
        int found = 0;
        if (plc_ckpt_gather_tensor(x, comm, plan, kind, t, g, &found, err, errlen)) return -1;
        if (!found) {
            if (required)
                return plc_fail(err, errlen, "no rank holds a %s buffer of %s", plc_buf_kind_name(kind), ti.name);
            continue;
        }
        if (comm->rank == 0) {
            char name[PLC_TENSOR_NAME_MAX + 16];
            snprintf(name, sizeof name, "%s%s", prefix, ti.name);
            int64_t shape[2] = {ti.shape[0], ti.shape[1]};
            if (plc_st_writer_add(w, name, PLC_ST_F32, ti.ndim, shape, g, err, errlen)) return -1;
            if (crcs) tensor_crc_meta(crcs, name, g, ti.numel);
        }
    }
    return 0;
}

static void free_bufs(float **bufs, int64_t n)
{
    if (!bufs) return;
    for (int64_t i = 0; i < n; i++) free(bufs[i]);
    free(bufs);
}

/* rank 0's outcome of a write, shared so that every rank fails together */
static int agree(plc_comm *comm, int rc, char *err, size_t errlen)
{
    double v = rc ? 1 : 0;
    if (plc_comm_max_f64(comm, &v, 1)) return plc_fail(err, errlen, "rank %d: %s", comm->rank, comm->error);
    if (v != 0 && rc == 0) return plc_fail(err, errlen, "another rank failed to write (see rank 0)");
    return v != 0 ? -1 : 0;
}

static int ckpt_save(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path,
                     int with_optimizer, char *err, size_t errlen);

/* A checkpoint's transfers are watched (comm.h) like a step's, and the
 * ranks waiting while rank 0 writes get time for the file at 20 MB/s. */
int plc_ckpt_save(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path,
                  int with_optimizer, char *err, size_t errlen)
{
    const int was = comm->watch_io;
    comm->watch_io = 1;
    comm->watch_io_extra_s = (double)plc_model_param_count(&plan->model) * 4.0 * (with_optimizer ? 3 : 1) / 20e6;
    int rc = ckpt_save(x, comm, plan, path, with_optimizer, err, errlen);
    comm->watch_io = was;
    return rc;
}

static int ckpt_save(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path,
                     int with_optimizer, char *err, size_t errlen)
{
    int64_t nt = plc_tensor_count(&plan->model);
    float **bufs = calloc((size_t)(3 * nt), sizeof *bufs);
    if (!bufs) return plc_fail(err, errlen, "out of memory");
    plc_st_writer w;
    plc_st_writer_init(&w);
    /* bf16 plans: the fp32 master weights are the parameters' exact values */
    plc_buf_kind weights = plan->train.precision == PLC_PREC_BF16 ? PLC_BUF_MASTER : PLC_BUF_PARAM;
    meta_list meta = {0};
    int rc = add_kind(x, comm, plan, weights, "", &w, &meta, bufs, 1, err, errlen);
    if (!rc && with_optimizer)
        rc = add_kind(x, comm, plan, PLC_BUF_ADAM_M, "optimizer.m.", &w, &meta, bufs + nt, 1, err, errlen);
    if (!rc && with_optimizer)
        rc = add_kind(x, comm, plan, PLC_BUF_ADAM_V, "optimizer.v.", &w, &meta, bufs + 2 * nt, 1, err, errlen);
    char *config = NULL;
    if (!rc && comm->rank == 0) {
        char step[32], seed[32], key[64], val[PLC_CKPT_VALUE_MAX];
        snprintf(step, sizeof step, "%" PRId64, plc_exec_next_step(x));
        snprintf(seed, sizeof seed, "%" PRIu64, plan->train.seed);
        config = plc_oracle_config_json(&plan->model, &plan->train, plan->train.steps);
        meta_add(&meta, "format", "plc-checkpoint");
        meta_add(&meta, "version", PLC_CKPT_VERSION);
        meta_add(&meta, "step", step);
        meta_add(&meta, "seed", seed);
        if (config) meta_add(&meta, "config", config);
        for (int i = 0; i < plc_ckpt_nsettings(); i++) {
            snprintf(key, sizeof key, "setting.%s", plc_ckpt_setting_value(plan, i, val, sizeof val));
            meta_add(&meta, key, val);
        }
        char crc[16];
        snprintf(crc, sizeof crc, "%08" PRIx32, plc_ckpt_meta_crc(meta.kv, meta.n));
        meta_add(&meta, PLC_CKPT_META_CRC_KEY, crc);
        if (meta.oom || !config) rc = plc_fail(err, errlen, "%s: out of memory for the metadata", path);
        for (size_t i = 0; !rc && i < meta.n; i++) plc_st_writer_meta(&w, meta.kv[2 * i], meta.kv[2 * i + 1]);
        if (!rc) rc = plc_st_writer_save(&w, path, err, errlen);
    }
    meta_free(&meta);
    free(config);
    plc_st_writer_free(&w);
    free_bufs(bufs, 3 * nt);
    return agree(comm, rc, err, errlen);
}

int plc_ckpt_write_kind(plc_executor *x, plc_comm *comm, const plc_plan *plan, plc_buf_kind kind,
                        const char *path, char *err, size_t errlen)
{
    int64_t nt = plc_tensor_count(&plan->model);
    float **bufs = calloc((size_t)nt, sizeof *bufs);
    if (!bufs) return plc_fail(err, errlen, "out of memory");
    plc_st_writer w;
    plc_st_writer_init(&w);
    int rc = add_kind(x, comm, plan, kind, "", &w, NULL, bufs, 1, err, errlen);
    if (!rc && comm->rank == 0) rc = plc_st_writer_save(&w, path, err, errlen);
    plc_st_writer_free(&w);
    free_bufs(bufs, nt);
    return agree(comm, rc, err, errlen);
}

int plc_ckpt_load(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path,
                  const char *const *allow, int nallow, char *err, size_t errlen)
{
    plc_st_file f;
    char msg[400];
    if (plc_st_open(&f, path, msg, sizeof msg)) return plc_fail(err, errlen, "%s", msg);
    int rc = 0;
    int64_t s = 0;
    if (plc_ckpt_check_file(&f, plan, path, allow, nallow, &s, err, errlen)) {
        plc_st_close(&f);
        return -1;
    }
    const plc_program *prog = plc_exec_program(x);
    plc_rank_coords co = plc_rank_to_coords(&plan->layout, comm->rank);
    plc_backend *be = plc_exec_backend(x);
    float *global = NULL, *local = NULL;
    for (uint32_t b = 0; b < prog->nbuffers && !rc; b++) {
        const plc_buffer *buf = &prog->buffers[b];
        const char *prefix;
        if (buf->tensor < 0) continue;
        if (buf->kind == PLC_BUF_PARAM || buf->kind == PLC_BUF_MASTER) prefix = "";
        else if (buf->kind == PLC_BUF_ADAM_M) prefix = "optimizer.m.";
        else if (buf->kind == PLC_BUF_ADAM_V) prefix = "optimizer.v.";
        else continue;
        plc_tensor_info ti;
        if (!plc_tensor_get(&plan->model, buf->tensor, &ti)) { rc = plc_fail(err, errlen, "bad tensor id"); break; }
        char name[PLC_TENSOR_NAME_MAX + 16];
        snprintf(name, sizeof name, "%s%s", prefix, ti.name);
        /* an initial model (step 0) may come without optimizer state: zeros */
        if (*prefix && s == 0 && !plc_st_find(&f, name)) continue;
        plc_shard_region reg;
        if (plc_shard_region_of(buf, &plan->layout, co, ti.shape[0], ti.shape[1], &reg, err, errlen)) { rc = -1; break; }
        free(global);
        free(local);
        global = malloc((size_t)ti.numel * sizeof *global);
        local = calloc((size_t)(reg.capacity > 0 ? reg.capacity : 1), sizeof *local);
        if (!global || !local) { rc = plc_fail(err, errlen, "out of memory"); break; }
        int64_t shape[2] = {ti.shape[0], ti.shape[1]};
        if (plc_ckpt_check_tensor(&f, name, path, err, errlen)) { rc = -1; break; }
        if (plc_st_read(&f, name, PLC_ST_F32, ti.ndim, shape, global, msg, sizeof msg)) {
            rc = plc_fail(err, errlen, "%s: %s (is it a checkpoint of this model?)", path, msg);
            break;
        }
        plc_shard_scatter(local, global, &reg, ti.shape[1]);
        if (upload_f32(be, plc_exec_buffer(x, (int32_t)b), local, buf->dtype, reg.capacity))
            rc = plc_fail(err, errlen, "rank %d: %s", comm->rank, be->error);
    }
    free(global);
    free(local);
    plc_st_close(&f);
    if (!rc) plc_exec_set_next_step(x, s);
    return rc;
}

/* ---- checkpoint directories ------------------------------------------------ */

#define LATEST "latest"

static int is_step_file(const char *name)
{
    size_t n = strlen(name);
    const char *suffix = ".safetensors";
    size_t k = strlen(suffix);
    if (strncmp(name, "step-", 5) || n <= 5 + k || strcmp(name + n - k, suffix)) return 0;
    for (size_t i = 5; i < n - k; i++)
        if (name[i] < '0' || name[i] > '9') return 0;
    return 1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* removes the step files of dir older than the newest `keep`, and stale
 * temporaries (rank 0) */
static int prune(const char *dir, int64_t keep, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) return plc_fail(err, errlen, "%s: cannot list the directory: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        /* temporaries a killed writer left behind (this job is the only writer) */
        if ((!strncmp(e->d_name, "step-", 5) && strstr(e->d_name, ".safetensors.tmp.")) ||
            !strncmp(e->d_name, LATEST ".tmp.", strlen(LATEST ".tmp."))) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
            continue;
        }
        if (!is_step_file(e->d_name)) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) { rc = plc_fail(err, errlen, "out of memory"); break; }
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name))) { rc = plc_fail(err, errlen, "out of memory"); break; }
        n++;
    }
    closedir(d);
    if (!rc) qsort(names, n, sizeof *names, cmp_str); /* fixed-width step numbers sort as numbers */
    for (size_t i = 0; !rc && (int64_t)i + keep < (int64_t)n; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (unlink(p) != 0 && errno != ENOENT)
            rc = plc_fail(err, errlen, "%s: cannot remove an old checkpoint: %s", p, strerror(errno));
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

int plc_ckpt_save_dir(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *dir, int64_t keep,
                      char *path, size_t pathlen, char *err, size_t errlen)
{
    char name[64];
    snprintf(name, sizeof name, "step-%08lld.safetensors", (long long)plc_exec_next_step(x));
    snprintf(path, pathlen, "%s/%s", dir, name);
    if (plc_ckpt_save(x, comm, plan, path, 1, err, errlen)) return -1;
    int rc = 0;
    comm->watch_io = 1;
    if (comm->rank == 0) {
        /* the completion marker, written last: a checkpoint is complete once named here */
        char latest[4096];
        snprintf(latest, sizeof latest, "%s/%s", dir, LATEST);
        plc_atomic_file af;
        rc = plc_atomic_open(&af, latest, err, errlen);
        if (!rc) {
            fprintf(af.f, "%s\n", name);
            rc = plc_atomic_commit(&af, err, errlen);
        }
        if (!rc) rc = prune(dir, keep, err, errlen);
    }
    rc = agree(comm, rc, err, errlen);
    comm->watch_io = 0;
    return rc;
}

int plc_ckpt_resolve(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) return plc_fail(err, errlen, "--resume %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        snprintf(out, outlen, "%s", path);
        return 0;
    }
    char latest[4096], name[256];
    snprintf(latest, sizeof latest, "%s/%s", path, LATEST);
    FILE *f = fopen(latest, "r");
    if (!f)
        return plc_fail(err, errlen, "--resume %s: a directory without a completed checkpoint (%s: %s)", path,
                        latest, strerror(errno));
    int ok = fgets(name, sizeof name, f) != NULL;
    fclose(f);
    if (ok) name[strcspn(name, "\n")] = '\0';
    if (!ok || !is_step_file(name))
        return plc_fail(err, errlen, "%s: damaged: expected the name of a step-NNNNNNNN.safetensors file", latest);
    snprintf(out, outlen, "%s/%s", path, name);
    return 0;
}

/* ---- Hugging Face checkpoints ------------------------------------------------ */

int plc_ckpt_export_hf(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *dir, char *err,
                       size_t errlen)
{
    int64_t nt = plc_tensor_count(&plan->model);
    float **bufs = calloc((size_t)nt, sizeof *bufs);
    if (!bufs) return plc_fail(err, errlen, "out of memory");
    plc_buf_kind weights = plan->train.precision == PLC_PREC_BF16 ? PLC_BUF_MASTER : PLC_BUF_PARAM;
    int rc = 0;
    const int was = comm->watch_io;
    comm->watch_io = 1;
    comm->watch_io_extra_s = (double)plc_model_param_count(&plan->model) * 4.0 / 20e6;
    for (int64_t t = 0; t < nt && !rc; t++) {
        plc_tensor_info ti;
        plc_tensor_get(&plan->model, t, &ti);
        if (comm->rank == 0 && !(bufs[t] = calloc((size_t)ti.numel, sizeof **bufs))) {
            rc = plc_fail(err, errlen, "out of memory");
            break;
        }
        int found = 0;
        rc = plc_ckpt_gather_tensor(x, comm, plan, weights, t, bufs[t], &found, err, errlen);
        if (!rc && !found)
            rc = plc_fail(err, errlen, "no rank holds a %s buffer of %s", plc_buf_kind_name(weights), ti.name);
    }
    if (!rc && comm->rank == 0) rc = plc_hf_write(&plan->model, (const float *const *)bufs, dir, err, errlen);
    free_bufs(bufs, nt);
    rc = agree(comm, rc, err, errlen);
    comm->watch_io = was;
    return rc;
}

int plc_ckpt_load_hf(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path, char *err,
                     size_t errlen)
{
    int64_t nt = plc_tensor_count(&plan->model);
    float **w = calloc((size_t)nt, sizeof *w);
    int rc = w ? 0 : plc_fail(err, errlen, "out of memory");
    for (int64_t t = 0; t < nt && !rc; t++) {
        plc_tensor_info ti;
        plc_tensor_get(&plan->model, t, &ti);
        if (!(w[t] = malloc((size_t)ti.numel * sizeof **w))) rc = plc_fail(err, errlen, "out of memory");
    }
    if (!rc) rc = plc_hf_read(&plan->model, path, w, err, errlen);
    const plc_program *prog = plc_exec_program(x);
    plc_rank_coords co = plc_rank_to_coords(&plan->layout, comm->rank);
    plc_backend *be = plc_exec_backend(x);
    float *local = NULL;
    for (uint32_t b = 0; b < prog->nbuffers && !rc; b++) {
        const plc_buffer *buf = &prog->buffers[b];
        if (buf->tensor < 0 || (buf->kind != PLC_BUF_PARAM && buf->kind != PLC_BUF_MASTER)) continue;
        plc_tensor_info ti;
        plc_tensor_get(&plan->model, buf->tensor, &ti);
        plc_shard_region reg;
        if (plc_shard_region_of(buf, &plan->layout, co, ti.shape[0], ti.shape[1], &reg, err, errlen)) { rc = -1; break; }
        free(local);
        if (!(local = calloc((size_t)(reg.capacity > 0 ? reg.capacity : 1), sizeof *local))) {
            rc = plc_fail(err, errlen, "out of memory");
            break;
        }
        plc_shard_scatter(local, w[buf->tensor], &reg, ti.shape[1]);
        if (upload_f32(be, plc_exec_buffer(x, (int32_t)b), local, buf->dtype, reg.capacity))
            rc = plc_fail(err, errlen, "rank %d: %s", comm->rank, be->error);
    }
    free(local);
    free_bufs(w, nt);
    if (!rc) plc_exec_set_next_step(x, 0);
    return rc;
}
