/* test_solver_pipe_split.c: the zero-bubble orders (plc_pipe_split_backward): every
 * rank runs each F, B and W of its chunks once, in dependency order; the
 * simulated bubbles against the paper's closed forms at equal op times
 * (Qi et al. 2024, Sec. 3.1 and 6: 1F1B 3(p-1), ZB-H1 p-1, ZB-H2 and ZB-V 0
 * units of bubble a rank); the in-flight micro-batches (1F1B's p, and 2p
 * for ZB-H2); the send-lag check; what the visits say of weight gradients. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/solver/solver_int.h"

static int split_shape(plc_pipe_split split, int64_t pp, plc_pipe_shape *sh)
{
    if (plc_pipe_shape_of(PLC_SCHED_1F1B, pp, 1, 4 * pp, sh)) return -1;
    return split ? plc_pipe_split_backward(sh, split) : 0;
}

/* the span of the longest rank, every stage's F, B and W taking tf, tb, tw
 * (a whole backward tb + tw), messages comm */
static double span_of(plc_pipe_split split, int64_t pp, int64_t M, double tf, double tb, double tw, double comm)
{
    plc_pipe_shape sh;
    CU_ASSERT_EQUAL_FATAL(split_shape(split, pp, &sh), 0);
    double *t = malloc(sizeof *t * (size_t)(3 * pp));
    for (int64_t c = 0; c < pp; c++) t[c] = tf, t[pp + c] = split ? tb : tb + tw, t[2 * pp + c] = tw;
    plc_sched_sim r;
    int rc = plc_sched_simulate_shape(&sh, M, t, t + pp, t + 2 * pp, comm, &r);
    free(t);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return r.span_max;
}

static void test_orders_complete(void)
{
    for (int split = PLC_SPLIT_ZB_H1; split <= PLC_SPLIT_ZB_H2; split++)
        for (int64_t pp = 1; pp <= 8; pp++)
            for (int64_t M = 1; M <= 3 * pp + 2; M++) {
                plc_pipe_shape sh;
                CU_ASSERT_EQUAL_FATAL(split_shape((plc_pipe_split)split, pp, &sh), 0);
                int64_t n = plc_pipe_units(&sh, M);
                CU_ASSERT_EQUAL(n, 3 * M);
                plc_pipe_unit *u = malloc(sizeof *u * (size_t)n);
                int *seen = calloc((size_t)(3 * M), sizeof *seen);
                for (int64_t r = 0; r < pp; r++) {
                    memset(seen, 0, sizeof *seen * (size_t)(3 * M));
                    CU_ASSERT_EQUAL_FATAL(plc_pipe_order(&sh, M, r, u), 0);
                    for (int64_t k = 0; k < n; k++) {
                        int kind = u[k].w ? 2 : u[k].bwd;
                        CU_ASSERT(!(u[k].w && u[k].bwd));
                        CU_ASSERT_EQUAL(u[k].chunk, r);
                        CU_ASSERT_FATAL(u[k].micro >= 0 && u[k].micro < M);
                        /* B after its F, W after its B */
                        if (kind > 0) CU_ASSERT(seen[(kind - 1) * M + u[k].micro]);
                        seen[kind * M + u[k].micro]++;
                    }
                    for (int64_t i = 0; i < 3 * M; i++) CU_ASSERT_EQUAL(seen[i], 1);
                }
                free(u);
                free(seen);
            }
    /* only 1F1B's chunks split */
    plc_pipe_shape sh;
    CU_ASSERT_EQUAL_FATAL(plc_pipe_shape_of(PLC_SCHED_GPIPE, 4, 1, 8, &sh), 0);
    CU_ASSERT_EQUAL(plc_pipe_split_backward(&sh, PLC_SPLIT_ZB_H1), -1);
    CU_ASSERT_EQUAL_FATAL(plc_pipe_shape_of(PLC_SCHED_1F1B, 4, 1, 8, &sh), 0);
    CU_ASSERT_EQUAL(plc_pipe_split_backward(&sh, PLC_SPLIT_NONE), -1);
}

/* zb_v and dualpipe_v: chunks r and 2pp-1-r on rank r, each F, B, W once,
 * in order; none for fewer than 2pp (2pp-1) micro-batches; zb_v's peak
 * pp, dualpipe_v's pp + 1/2 (pp on rank 0 at 2pp-1 micro-batches) */
static void v_orders(plc_pipe_split split)
{
    bool zbv = split == PLC_SPLIT_ZB_V;
    for (int64_t pp = 1; pp <= 8; pp++)
        for (int64_t M = 1; M <= 4 * pp + 1; M++) {
            plc_pipe_shape sh;
            CU_ASSERT_EQUAL_FATAL(split_shape(split, pp, &sh), 0);
            CU_ASSERT_EQUAL(sh.nchunks, 2 * pp);
            CU_ASSERT_EQUAL(plc_pipe_chunk_rank(&sh, 0), 0);
            CU_ASSERT_EQUAL(plc_pipe_chunk_rank(&sh, 2 * pp - 1), 0);
            CU_ASSERT_EQUAL(plc_pipe_chunk_rank(&sh, pp - 1), pp - 1);
            CU_ASSERT_EQUAL(plc_pipe_chunk_rank(&sh, pp), pp - 1);
            int64_t n = plc_pipe_units(&sh, M);
            CU_ASSERT_EQUAL(n, 6 * M);
            plc_pipe_unit *u = malloc(sizeof *u * (size_t)n);
            if (M < (zbv ? 2 * pp : 2 * pp - 1)) {
                CU_ASSERT_EQUAL(plc_pipe_order(&sh, M, 0, u), -1);
                free(u);
                continue;
            }
            int *seen = calloc((size_t)(6 * M), sizeof *seen);
            for (int64_t r = 0; r < pp; r++) {
                memset(seen, 0, sizeof *seen * (size_t)(6 * M));
                CU_ASSERT_EQUAL_FATAL(plc_pipe_order(&sh, M, r, u), 0);
                for (int64_t k = 0; k < n; k++) {
                    int kind = u[k].w ? 2 : u[k].bwd, j = u[k].chunk == r ? 0 : 1;
                    CU_ASSERT_FATAL(u[k].chunk == r || u[k].chunk == 2 * pp - 1 - r);
                    CU_ASSERT_FATAL(u[k].micro >= 0 && u[k].micro < M);
                    if (kind > 0) CU_ASSERT(seen[(j * 3 + kind - 1) * M + u[k].micro]);
                    seen[(j * 3 + kind) * M + u[k].micro]++;
                }
                for (int64_t i = 0; i < 6 * M; i++) CU_ASSERT_EQUAL(seen[i], 1);
                /* zb_v: 1F1B's peak, pp micro-batches of the rank's layers */
                double peak = plc_pipe_inflight(&sh, M, r);
                if (zbv || M >= 2 * pp) CU_ASSERT_DOUBLE_EQUAL(peak, zbv ? (double)pp : (double)pp + 0.5, 1e-12);
                CU_ASSERT(peak <= (double)pp + 0.5);
            }
            /* the V turns on rank pp-1 (chunk pp-1 hands on to chunk pp in
             * place) and sends both ways: with sends waited for two units
             * on, a rank can wait for a receive posted only after its own
             * wait, so its sends are waited for at the end of the step
             * (pp 1: no messages at all) */
            int64_t lag = plc_pipe_send_lag_run(&sh, M);
            CU_ASSERT(lag == 2 || lag == n);
            if (zbv) CU_ASSERT_EQUAL(lag, pp == 1 ? 2 : n);
            /* zb_v: no bubble at equal times (each chunk half a stage's F, B,
             * W); dualpipe_v: less than 1F1B's 3(pp-1) */
            double *t = malloc(sizeof *t * (size_t)(2 * pp));
            for (int64_t c = 0; c < 2 * pp; c++) t[c] = 0.5;
            plc_sched_sim res;
            CU_ASSERT_EQUAL_FATAL(plc_sched_simulate_shape(&sh, M, t, t, t, 0, &res), 0);
            if (zbv) CU_ASSERT_DOUBLE_EQUAL(res.span_max, 3.0 * (double)M, 1e-9);
            if (!zbv) CU_ASSERT(res.span_max - 3.0 * (double)M <= 3.0 * (double)(pp - 1) * 0.5 + 1e-9);
            free(t);
            free(u);
            free(seen);
        }
    /* fewer layers than chunks */
    plc_pipe_shape sh;
    CU_ASSERT_EQUAL_FATAL(plc_pipe_shape_of(PLC_SCHED_1F1B, 4, 1, 6, &sh), 0);
    CU_ASSERT_EQUAL(plc_pipe_split_backward(&sh, split), -1);
}

static void test_zb_v_order(void) { v_orders(PLC_SPLIT_ZB_V); }
static void test_dualpipe_v_order(void) { v_orders(PLC_SPLIT_DUALPIPE_V); }

static void test_equal_time_bubbles(void)
{
    for (int64_t pp = 2; pp <= 16; pp *= 2)
        for (int64_t M = 2 * pp; M <= 6 * pp; M += pp) {
            double busy = 3.0 * (double)M, p1 = (double)(pp - 1);
            CU_ASSERT_DOUBLE_EQUAL(span_of(PLC_SPLIT_NONE, pp, M, 1, 1, 1, 0) - busy, 3 * p1, 1e-9);
            CU_ASSERT_DOUBLE_EQUAL(span_of(PLC_SPLIT_ZB_H1, pp, M, 1, 1, 1, 0) - busy, p1, 1e-9);
            CU_ASSERT_DOUBLE_EQUAL(span_of(PLC_SPLIT_ZB_H2, pp, M, 1, 1, 1, 0) - busy, 0, 1e-9);
        }
    /* unequal times: the bubble of each split order is 1F1B's at most, and
     * zb_h2's is zb_h1's at most */
    const double tw[] = {0.2, 0.5, 1.0, 1.5};
    for (int64_t pp = 2; pp <= 8; pp *= 2)
        for (int i = 0; i < 4; i++) {
            int64_t M = 3 * pp;
            double a = span_of(PLC_SPLIT_NONE, pp, M, 1.0, 1.1, tw[i], 0.05);
            double b = span_of(PLC_SPLIT_ZB_H1, pp, M, 1.0, 1.1, tw[i], 0.05);
            double c = span_of(PLC_SPLIT_ZB_H2, pp, M, 1.0, 1.1, tw[i], 0.05);
            CU_ASSERT(b <= a + 1e-9);
            CU_ASSERT(c <= b + 1e-9);
        }
}

static void test_split_inflight(void)
{
    for (int64_t pp = 2; pp <= 8; pp++) {
        plc_pipe_shape h1, h2, base;
        int64_t M = 4 * pp;
        CU_ASSERT_EQUAL_FATAL(split_shape(PLC_SPLIT_ZB_H1, pp, &h1), 0);
        CU_ASSERT_EQUAL_FATAL(split_shape(PLC_SPLIT_ZB_H2, pp, &h2), 0);
        CU_ASSERT_EQUAL_FATAL(split_shape(PLC_SPLIT_NONE, pp, &base), 0);
        for (int64_t r = 0; r < pp; r++) {
            /* zb_h1: every rank at 1F1B's first-stage peak, pp; zb_h2: 2pp */
            CU_ASSERT_DOUBLE_EQUAL(plc_pipe_inflight(&h1, M, r), (double)pp, 0);
            CU_ASSERT_DOUBLE_EQUAL(plc_pipe_inflight(&h2, M, r), (double)(2 * pp), 0);
            CU_ASSERT(plc_pipe_inflight(&h1, M, r) >= plc_pipe_inflight(&base, M, r));
        }
        /* fewer micro-batches than that: all of them */
        CU_ASSERT_DOUBLE_EQUAL(plc_pipe_inflight(&h2, 3, 0), 3.0, 0);
    }
}

static void test_split_send_lag_and_visits(void)
{
    for (int split = PLC_SPLIT_ZB_H1; split <= PLC_SPLIT_ZB_H2; split++)
        for (int64_t pp = 2; pp <= 8; pp++)
            for (int64_t M = 1; M <= 3 * pp; M++) {
                plc_pipe_shape sh;
                CU_ASSERT_EQUAL_FATAL(split_shape((plc_pipe_split)split, pp, &sh), 0);
                /* every rank finishes with sends waited for two units on */
                CU_ASSERT_EQUAL(plc_pipe_send_lag_run(&sh, M), 2);
            }
    plc_pipe_shape sh;
    CU_ASSERT_EQUAL_FATAL(split_shape(PLC_SPLIT_ZB_H1, 2, &sh), 0);
    /* the last chunk's B: the head's final norm, then its layers back; no
     * weight gradients. Its W: the same keys, making them. */
    plc_pipe_unit b = {.bwd = 1, .chunk = 1, .micro = 0}, w = {.w = 1, .chunk = 1, .micro = 0};
    CU_ASSERT_EQUAL(plc_pipe_visits(&sh, &b), plc_pipe_visits(&sh, &w));
    for (int64_t i = 0; i < plc_pipe_visits(&sh, &b); i++) {
        bool gb, gw;
        CU_ASSERT_EQUAL(plc_pipe_visit(&sh, &b, i, &gb), plc_pipe_visit(&sh, &w, i, &gw));
        CU_ASSERT(!gb);
        CU_ASSERT(gw);
    }
}

/* plc_sched_zb_auto: each F, B, W once in order, within the limit, never a
 * longer span than zb_h1 (limit pp) or zb_h2 (limit 2pp) on the same op
 * times, none under a limit of 1 that cannot hold a forward through its W */
static void test_zb_auto(void)
{
    const double tws[] = {0.3, 0.5, 1.0}, comms[] = {0.0, 0.05};
    for (int64_t pp = 2; pp <= 8; pp *= 2)
        for (int64_t M = pp; M <= 3 * pp; M += pp)
            for (int i = 0; i < 3; i++)
                for (int ci = 0; ci < 2; ci++)
                    for (int lim = 1; lim <= 2; lim++) {
                        int64_t limit = lim * pp, per = 3 * M;
                        double *t = malloc(sizeof *t * (size_t)(3 * pp));
                        plc_pipe_unit *u = malloc(sizeof *u * (size_t)(pp * per));
                        for (int64_t c = 0; c < pp; c++) t[c] = 1.0, t[pp + c] = 1.05, t[2 * pp + c] = tws[i];
                        plc_sched_sim r;
                        CU_ASSERT_EQUAL_FATAL(plc_sched_zb_auto(pp, M, limit, t, t + pp, t + 2 * pp, comms[ci], u, &r), 0);
                        int *seen = calloc((size_t)(3 * M), sizeof *seen);
                        for (int64_t q = 0; q < pp; q++) {
                            memset(seen, 0, sizeof *seen * (size_t)(3 * M));
                            int64_t held = 0;
                            for (int64_t k = 0; k < per; k++) {
                                const plc_pipe_unit *x = &u[q * per + k];
                                int kind = x->w ? 2 : x->bwd;
                                CU_ASSERT_EQUAL(x->chunk, q);
                                CU_ASSERT_FATAL(x->micro >= 0 && x->micro < M);
                                if (kind > 0) CU_ASSERT(seen[(kind - 1) * M + x->micro]);
                                seen[kind * M + x->micro]++;
                                held += kind == 2 ? -1 : kind == 0;
                                CU_ASSERT(held <= limit);
                            }
                            for (int64_t k = 0; k < 3 * M; k++) CU_ASSERT_EQUAL(seen[k], 1);
                        }
                        double hand = span_of(lim == 1 ? PLC_SPLIT_ZB_H1 : PLC_SPLIT_ZB_H2, pp, M, 1.0, 1.05, tws[i],
                                              comms[ci]);
                        CU_ASSERT(r.span_max <= hand + 1e-9);
                        free(seen);
                        free(t);
                        free(u);
                    }
    double t[6] = {1, 1, 1, 1, 1, 1};
    plc_pipe_unit u[2 * 3 * 4];
    plc_sched_sim r;
    CU_ASSERT_EQUAL(plc_sched_zb_auto(2, 4, 0, t, t + 2, t + 4, 0, u, &r), -1);
}

void register_test_solver_pipe_split(void);
void register_test_solver_pipe_split(void)
{
    CU_pSuite s = CU_add_suite("pipe_split", NULL, NULL);
    CU_add_test(s, "split orders: each F, B, W once, in order", test_orders_complete);
    CU_add_test(s, "zb_v: the V's chunks, its order, peak and bubble", test_zb_v_order);
    CU_add_test(s, "dualpipe_v: the V's chunks, its order, peak and bubble", test_dualpipe_v_order);
    CU_add_test(s, "bubbles at equal op times: 3(p-1), p-1, 0", test_equal_time_bubbles);
    CU_add_test(s, "in-flight micro-batches: p and 2p", test_split_inflight);
    CU_add_test(s, "send lag and weight-gradient visits", test_split_send_lag_and_visits);
    CU_add_test(s, "orders from op times: complete, within the limit, never worse", test_zb_auto);
}
