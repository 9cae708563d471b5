/* plan_diff.c: plc diff's semantic comparison of two plans: layout,
 * predictions, each stage's program (instruction counts by op and
 * communication volume by kind), then a unified diff of one rank's
 * instruction listing (diff -u on two temporary dumps). */
#include "compiler/plantools/plan_diff.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/plan_io.h"
#include "compiler/plantools/plan_dump.h"

typedef struct prog_stats {
    uint64_t by_op[PLC_OP_COUNT];
    double comm_bytes[PLC_OP_COUNT]; /* bytes moved per rank, by collective or message kind */
} prog_stats;

static bool is_comm(plc_op op)
{
    return op == PLC_OP_ALLREDUCE || op == PLC_OP_REDUCE_SCATTER || op == PLC_OP_ALLGATHER || op == PLC_OP_BROADCAST ||
           op == PLC_OP_SEND || op == PLC_OP_RECV;
}

static void stats_of(const plc_plan *p, const plc_program *g, prog_stats *s)
{
    memset(s, 0, sizeof *s);
    for (uint32_t i = 0; i < g->ninstrs; i++) {
        const plc_instr *in = &g->instrs[i];
        s->by_op[in->op]++;
        if (!is_comm(in->op)) continue;
        double es = (double)plc_dtype_size(g->buffers[in->buf[0]].dtype);
        double bytes = (double)in->arg[0] * es;
        if ((in->op == PLC_OP_ALLGATHER || in->op == PLC_OP_REDUCE_SCATTER) && in->group >= 0)
            bytes *= (double)plc_plan_group_size(&p->layout, &p->groups[in->group]);
        s->comm_bytes[in->op] += bytes;
    }
}

static double mib(double b) { return b / (1024.0 * 1024.0); }

static void change_i(FILE *out, const char *what, long long a, long long b, int *n)
{
    if (a == b) return;
    fprintf(out, "  %-16s %lld -> %lld\n", what, a, b);
    (*n)++;
}

static void change_s(FILE *out, const char *what, const char *a, const char *b, int *n)
{
    if (!strcmp(a ? a : "?", b ? b : "?")) return;
    fprintf(out, "  %-16s %s -> %s\n", what, a ? a : "?", b ? b : "?");
    (*n)++;
}

static const char *pct(double a, double b, char *buf, size_t n)
{
    if (a == 0 && n) buf[0] = 0;
    else snprintf(buf, n, " (%+.1f%%)", 100.0 * (b - a) / a);
    return buf;
}

static int write_dump(const plc_plan *p, int64_t rank, char *path)
{
    strcpy(path, "/tmp/plc-diff-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return -1;
    }
    plc_rank_coords c = plc_rank_to_coords(&p->layout, rank);
    plc_dump_program(f, p, (uint32_t)p->stage_program[c.pp], false, false);
    return fclose(f);
}

int plc_plan_diff(FILE *out, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b, int64_t rank,
                  bool unified)
{
    const plc_layout *la = &a->layout, *lb = &b->layout;
    int n = 0;
    fprintf(out, "--- %s\n+++ %s\n", name_a, name_b);
    if (a->spec_hash != b->spec_hash) fprintf(out, "spec: the sources differ (%s, %s)\n", a->spec_path ? a->spec_path : "-", b->spec_path ? b->spec_path : "-");
    fprintf(out, "layout:\n");
    change_i(out, "dp", la->dp, lb->dp, &n);
    change_i(out, "tp", la->tp, lb->tp, &n);
    change_i(out, "pp", la->pp, lb->pp, &n);
    change_i(out, "cp", la->cp, lb->cp, &n);
    change_i(out, "sp", la->sp, lb->sp, &n);
    change_i(out, "vpp", la->vpp, lb->vpp, &n);
    change_i(out, "micro_batch", la->micro_batch, lb->micro_batch, &n);
    change_s(out, "schedule", plc_schedule_name(la->schedule), plc_schedule_name(lb->schedule), &n);
    change_s(out, "recompute", plc_recompute_name(la->recompute), plc_recompute_name(lb->recompute), &n);
    change_i(out, "zero", la->zero, lb->zero, &n);
    change_s(out, "attention", plc_attention_name(la->attention), plc_attention_name(lb->attention), &n);
    change_i(out, "world_size", a->world_size, b->world_size, &n);
    change_i(out, "global_batch", a->train.global_batch, b->train.global_batch, &n);
    change_s(out, "precision", plc_precision_name(a->train.precision), plc_precision_name(b->train.precision), &n);
    if (!n) fprintf(out, "  (unchanged)\n");

    char p1[32], p2[32], p3[32];
    fprintf(out, "predicted:\n");
    fprintf(out, "  step time        %.6g s -> %.6g s%s\n", a->pred.step_time_s, b->pred.step_time_s,
            pct(a->pred.step_time_s, b->pred.step_time_s, p1, sizeof p1));
    fprintf(out, "  tokens/s         %.6g -> %.6g%s\n", a->pred.tokens_per_s, b->pred.tokens_per_s,
            pct(a->pred.tokens_per_s, b->pred.tokens_per_s, p2, sizeof p2));
    fprintf(out, "  MFU              %.2f%% -> %.2f%%\n", 100 * a->pred.mfu, 100 * b->pred.mfu);
    fprintf(out, "  peak (plan)      %.2f MiB -> %.2f MiB%s\n", mib(a->pred.peak_bytes_plan), mib(b->pred.peak_bytes_plan),
            pct(a->pred.peak_bytes_plan, b->pred.peak_bytes_plan, p3, sizeof p3));
    fprintf(out, "  peak (solver)    %.2f MiB -> %.2f MiB\n", mib(a->pred.peak_bytes_estimate),
            mib(b->pred.peak_bytes_estimate));

    int64_t stages = la->pp > lb->pp ? la->pp : lb->pp;
    for (int64_t s = 0; s < stages; s++) {
        const plc_program *ga = s < la->pp ? &a->programs[a->stage_program[s]] : NULL;
        const plc_program *gb = s < lb->pp ? &b->programs[b->stage_program[s]] : NULL;
        fprintf(out, "stage %lld:\n", (long long)s);
        if (!ga || !gb) {
            fprintf(out, "  only in %s\n", ga ? name_a : name_b);
            continue;
        }
        prog_stats sa, sb;
        stats_of(a, ga, &sa);
        stats_of(b, gb, &sb);
        fprintf(out, "  instructions     %u -> %u\n", ga->ninstrs, gb->ninstrs);
        fprintf(out, "  buffers          %u -> %u\n", ga->nbuffers, gb->nbuffers);
        fprintf(out, "  arena            %.2f MiB -> %.2f MiB%s\n", mib((double)ga->arena_bytes), mib((double)gb->arena_bytes),
                pct((double)ga->arena_bytes, (double)gb->arena_bytes, p1, sizeof p1));
        for (int op = 0; op < PLC_OP_COUNT; op++)
            if (sa.by_op[op] != sb.by_op[op])
                fprintf(out, "  %-16s %llu -> %llu\n", plc_op_name((plc_op)op), (unsigned long long)sa.by_op[op],
                        (unsigned long long)sb.by_op[op]);
        for (int op = 0; op < PLC_OP_COUNT; op++)
            if (is_comm((plc_op)op) && (sa.comm_bytes[op] || sb.comm_bytes[op]))
                fprintf(out, "  %-16s %.3f MiB -> %.3f MiB per rank%s\n", plc_op_name((plc_op)op), mib(sa.comm_bytes[op]),
                        mib(sb.comm_bytes[op]), sa.comm_bytes[op] != sb.comm_bytes[op] ? "" : " (same)");
    }
    if (!unified) return 0;
    if (rank >= a->world_size || rank >= b->world_size) {
        fprintf(stderr, "plc diff: error: rank %lld is not in both plans (%lld and %lld ranks)\n", (long long)rank,
                (long long)a->world_size, (long long)b->world_size);
        return -1;
    }
    char fa[64], fb[64];
    if (write_dump(a, rank, fa)) {
        fprintf(stderr, "plc diff: error: cannot write a temporary file\n");
        return -1;
    }
    if (write_dump(b, rank, fb)) {
        remove(fa);
        fprintf(stderr, "plc diff: error: cannot write a temporary file\n");
        return -1;
    }
    fprintf(out, "program of rank %lld (instructions):\n", (long long)rank);
    fflush(out);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "diff -u --label '%s' --label '%s' '%s' '%s'", "a/rank", "b/rank", fa, fb);
    FILE *d = popen(cmd, "r");
    int rc = 0;
    if (!d) {
        fprintf(stderr, "plc diff: error: cannot run diff\n");
        rc = -1;
    } else {
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, d)) > 0) fwrite(buf, 1, got, out);
        int st = pclose(d);
        if (st == -1 || (st != 0 && st != 256)) { /* diff exits 1 when the files differ */
            fprintf(stderr, "plc diff: error: diff failed (is diffutils installed?)\n");
            rc = -1;
        }
    }
    remove(fa);
    remove(fb);
    return rc;
}
