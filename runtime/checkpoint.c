/* checkpoint.c: gathering shards into global tensors, and back. See checkpoint.h. */
#include "runtime/checkpoint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/parse_num.h"
#include "common/tensors.h"
#include "kernels/common/bf16.h"
#include "runtime/data.h"
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
                    rc = plc_fail(err, errlen, "rank %d: sending a shard failed", comm->rank);
                    break;
                }
            } else if (plc_comm_recv_bytes(comm, local, (size_t)n * sizeof(float), (int)r, tag)) {
                rc = plc_fail(err, errlen, "receiving a shard of %s from rank %lld failed", ti.name, (long long)r);
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

/* Adds tensors of `kind` (all of them) to the writer on rank 0, under
 * prefix + NAME. The data stays alive in *bufs until the writer saves. */
static int add_kind(plc_executor *x, plc_comm *comm, const plc_plan *plan, plc_buf_kind kind,
                    const char *prefix, plc_st_writer *w, float **bufs, int required, char *err,
                    size_t errlen)
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
    if (plc_comm_max_f64(comm, &v, 1)) return plc_fail(err, errlen, "MPI failed");
    if (v != 0 && rc == 0) return plc_fail(err, errlen, "another rank failed to write (see rank 0)");
    return v != 0 ? -1 : 0;
}

int plc_ckpt_save(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path,
                  int with_optimizer, char *err, size_t errlen)
{
    int64_t nt = plc_tensor_count(&plan->model);
    float **bufs = calloc((size_t)(3 * nt), sizeof *bufs);
    if (!bufs) return plc_fail(err, errlen, "out of memory");
    plc_st_writer w;
    plc_st_writer_init(&w);
    /* bf16 plans: the fp32 master weights are the parameters' exact values */
    plc_buf_kind weights = plan->train.precision == PLC_PREC_BF16 ? PLC_BUF_MASTER : PLC_BUF_PARAM;
    int rc = add_kind(x, comm, plan, weights, "", &w, bufs, 1, err, errlen);
    if (!rc && with_optimizer)
        rc = add_kind(x, comm, plan, PLC_BUF_ADAM_M, "optimizer.m.", &w, bufs + nt, 1, err, errlen);
    if (!rc && with_optimizer)
        rc = add_kind(x, comm, plan, PLC_BUF_ADAM_V, "optimizer.v.", &w, bufs + 2 * nt, 1, err, errlen);
    char *config = NULL;
    if (!rc && comm->rank == 0) {
        char step[32], seed[32];
        snprintf(step, sizeof step, "%" PRId64, plc_exec_next_step(x));
        snprintf(seed, sizeof seed, "%" PRIu64, plan->train.seed);
        config = plc_oracle_config_json(&plan->model, &plan->train, plan->train.steps);
        plc_st_writer_meta(&w, "format", "plc-checkpoint");
        plc_st_writer_meta(&w, "version", "1");
        plc_st_writer_meta(&w, "step", step);
        plc_st_writer_meta(&w, "seed", seed);
        if (config) plc_st_writer_meta(&w, "config", config);
        rc = plc_st_writer_save(&w, path, err, errlen);
    }
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
    int rc = add_kind(x, comm, plan, kind, "", &w, bufs, 1, err, errlen);
    if (!rc && comm->rank == 0) rc = plc_st_writer_save(&w, path, err, errlen);
    plc_st_writer_free(&w);
    free_bufs(bufs, nt);
    return agree(comm, rc, err, errlen);
}

int plc_ckpt_load(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path, char *err,
                  size_t errlen)
{
    plc_st_file f;
    char msg[400];
    if (plc_st_open(&f, path, msg, sizeof msg)) return plc_fail(err, errlen, "%s", msg);
    int rc = 0;
    const char *fmt = plc_st_meta_get(&f, "format"), *ver = plc_st_meta_get(&f, "version");
    const char *step = plc_st_meta_get(&f, "step");
    if (!fmt || strcmp(fmt, "plc-checkpoint") || !ver || strcmp(ver, "1") || !step) {
        plc_st_close(&f);
        return plc_fail(err, errlen, "%s: not a plc checkpoint of version 1 (metadata format, version, step)", path);
    }
    int64_t s;
    if (plc_parse_int(step, 0, INT64_MAX, &s)) {
        plc_st_close(&f);
        return plc_fail(err, errlen, "%s: bad step '%s' in the metadata", path, step);
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
