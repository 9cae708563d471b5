/* bench/schedules.c: the schedule simulator given a stage's op times.
 *
 *   bench_schedules SCHEDULE PP VPP M T_F T_B T_W T_COMM
 *
 * simulates one step of SCHEDULE (gpipe, 1f1b, interleaved, zb_h1, zb_h2,
 * zb_v, dualpipe_v; zb_1p and zb_2p: the order plc_sched_zb_auto builds from these op
 * times under a limit of pp and 2 pp micro-batches in flight)
 * on PP ranks with M micro-batches, every stage taking T_F for a forward,
 * T_B for the input-gradient half of a backward and T_W for its
 * weight-gradient half (a whole backward takes T_B + T_W), each pipeline
 * message T_COMM (any one unit of time: the paper's milliseconds). VPP
 * counts for interleaved only (a virtual stage takes 1/VPP of the stage's
 * times; zb_v's and dualpipe_v's two chunks a rank half of them). It prints one line:
 *
 *   makespan=X span=Y busy=Z bubble_span=A bubble_makespan=B peak_inflight=N inflight=N0,N1,...
 *
 * makespan from the first rank's first unit to the last rank's last, span
 * the longest rank's own span (the paper's "cost": Qi et al. 2024, Table 5),
 * busy = M (T_F + T_B + T_W), the bubble rates (cost - busy) / cost of each,
 * and the most micro-batches any rank holds (plc_pipe_inflight), then
 * each rank's.
 * bench/fidelity --schedules reads calibration/schedule_bubbles.csv's rows
 * into these arguments. Without arguments it prints the bubble rates of
 * 1f1b, zb_h1, zb_h2, zb_v, dualpipe_v, zb_1p and zb_2p at equal F, B, W times (the
 * paper's 3(p-1), p-1, 0 and 0 units of bubble a rank for the first four). Exit 0, 1 on a bad argument or a schedule the
 * simulator cannot run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_num.h"
#include "compiler/solver/solver_int.h"

#define MAX_RANKS 4096

typedef struct result {
    double makespan, span, busy;
    double inflight;            /* the most of any rank */
    double rank_inflight[MAX_RANKS]; /* each rank's peak */
} result;

/* the shape of a schedule named as bench_schedules takes it; -1 when the
 * name is unknown or the layers do not split */
static int shape_of(const char *name, int64_t pp, int64_t vpp, plc_pipe_shape *sh)
{
    static const struct {
        const char *name;
        plc_schedule s;
        plc_pipe_split split;
    } names[] = {
        {"gpipe", PLC_SCHED_GPIPE, PLC_SPLIT_NONE},   {"1f1b", PLC_SCHED_1F1B, PLC_SPLIT_NONE},
        {"interleaved", PLC_SCHED_INTERLEAVED, PLC_SPLIT_NONE}, {"zb_h1", PLC_SCHED_1F1B, PLC_SPLIT_ZB_H1},
        {"zb_h2", PLC_SCHED_1F1B, PLC_SPLIT_ZB_H2},     {"zb_v", PLC_SCHED_1F1B, PLC_SPLIT_ZB_V},
        {"dualpipe_v", PLC_SCHED_1F1B, PLC_SPLIT_DUALPIPE_V},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i].name)) continue;
        int64_t v = names[i].s == PLC_SCHED_INTERLEAVED ? vpp : 1;
        if (plc_pipe_shape_of(names[i].s, pp, v, 2 * pp * v, sh)) return -1; /* zb_v: 2pp chunks */
        return names[i].split ? plc_pipe_split_backward(sh, names[i].split) : 0;
    }
    return -1;
}

/* zb_1p, zb_2p: the order plc_sched_zb_auto builds under a limit of pp
 * (2 pp) micro-batches in flight */
static int simulate_auto(int64_t limit, int64_t pp, int64_t M, double tf, double tb, double tw, double comm,
                         result *out)
{
    double *t = malloc(sizeof *t * (size_t)(3 * pp));
    plc_pipe_unit *u = malloc(sizeof *u * (size_t)(3 * pp * M));
    int rc = -1;
    plc_sched_sim r;
    if (t && u) {
        for (int64_t c = 0; c < pp; c++) t[c] = tf, t[pp + c] = tb, t[2 * pp + c] = tw;
        rc = plc_sched_zb_auto(pp, M, limit, t, t + pp, t + 2 * pp, comm, u, &r);
    }
    if (rc == 0) {
        out->makespan = r.makespan;
        out->span = r.span_max;
        out->busy = (double)M * (tf + tb + tw);
        out->inflight = 0;
        for (int64_t q = 0; q < pp; q++) { /* forwarded and not through W */
            int64_t held = 0, most = 0;
            for (int64_t k = 0; k < 3 * M; k++) {
                const plc_pipe_unit *x = &u[q * 3 * M + k];
                held += x->w ? -1 : !x->bwd;
                if (held > most) most = held;
            }
            out->rank_inflight[q] = (double)most;
            if (most > out->inflight) out->inflight = (double)most;
        }
    }
    free(t);
    free(u);
    return rc;
}

static int simulate(const char *name, int64_t pp, int64_t vpp, int64_t M, double tf, double tb, double tw,
                    double comm, result *out)
{
    if (!strcmp(name, "zb_1p") || !strcmp(name, "zb_2p"))
        return simulate_auto(name[3] == '1' ? pp : 2 * pp, pp, M, tf, tb, tw, comm, out);
    plc_pipe_shape sh;
    if (shape_of(name, pp, vpp, &sh)) return -1;
    int64_t nc = sh.nchunks;
    double *t = malloc(sizeof *t * (size_t)(3 * nc)), share = 1.0 / (double)sh.per_rank;
    if (!t) return -1;
    /* a whole backward is B and W at once */
    for (int64_t c = 0; c < nc; c++) {
        t[c] = tf * share;
        t[nc + c] = (sh.split ? tb : tb + tw) * share;
        t[2 * nc + c] = tw * share;
    }
    plc_sched_sim r;
    int rc = plc_sched_simulate_shape(&sh, M, t, t + nc, t + 2 * nc, comm, &r);
    free(t);
    if (rc) return -1;
    out->makespan = r.makespan;
    out->span = r.span_max;
    out->busy = (double)M * (tf + tb + tw);
    out->inflight = 0;
    for (int64_t q = 0; q < pp; q++) {
        double h = plc_pipe_inflight(&sh, M, q);
        out->rank_inflight[q] = h;
        if (h > out->inflight) out->inflight = h;
    }
    return 0;
}

static int table(void)
{
    static const char *const scheds[] = {"1f1b", "zb_h1", "zb_h2", "zb_v", "dualpipe_v", "zb_1p", "zb_2p"};
    printf("bubble rate over the longest rank's span, F = B = W = 1, no message time\n");
    printf("%-10s %4s %4s %10s %10s\n", "sched", "pp", "M", "bubble", "inflight");
    for (int64_t pp = 4; pp <= 16; pp *= 2)
        for (size_t i = 0; i < sizeof scheds / sizeof scheds[0]; i++) {
            static result r;
            int64_t M = 3 * pp;
            if (simulate(scheds[i], pp, 1, M, 1, 1, 1, 0, &r)) return 1;
            printf("%-10s %4lld %4lld %10.4f %10.1f\n", scheds[i], (long long)pp, (long long)M,
                   (r.span - r.busy) / r.span, r.inflight);
        }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 1) return table();
    if (argc != 9) {
        fprintf(stderr, "usage: bench_schedules SCHEDULE PP VPP M T_F T_B T_W T_COMM\n");
        return 1;
    }
    int64_t n[3];
    double t[4];
    static const int64_t most[3] = {MAX_RANKS, 64, 1 << 20}; /* pp, vpp, micro-batches: a step the simulator runs */
    for (int i = 0; i < 3; i++)
        if (plc_parse_int(argv[2 + i], 1, most[i], &n[i])) {
            fprintf(stderr, "bench_schedules: '%s' is not an integer in 1 .. %lld\n", argv[2 + i], (long long)most[i]);
            return 1;
        }
    for (int i = 0; i < 4; i++)
        if (plc_parse_real(argv[5 + i], "", 0.0, 1e12, &t[i])) {
            fprintf(stderr, "bench_schedules: '%s' is not a time in 0 .. 1e12\n", argv[5 + i]);
            return 1;
        }
    static result r;
    if (simulate(argv[1], n[0], n[1], n[2], t[0], t[1], t[2], t[3], &r)) {
        fprintf(stderr, "bench_schedules: cannot simulate %s on pp %s, vpp %s, %s micro-batches\n", argv[1], argv[2],
                argv[3], argv[4]);
        return 1;
    }
    printf("makespan=%.6f span=%.6f busy=%.6f bubble_span=%.6f bubble_makespan=%.6f peak_inflight=%.6g inflight=",
           r.makespan, r.span, r.busy, (r.span - r.busy) / r.span, (r.makespan - r.busy) / r.makespan, r.inflight);
    for (int64_t q = 0; q < n[0]; q++) printf("%s%.6g", q ? "," : "", r.rank_inflight[q]);
    printf("\n");
    return 0;
}
