/* test_cli_error_bars.c: the error bars of plc solve and explain
 * (compiler/cli/report_range.c, plc_pick_by_range in search.c): the table's
 * first matching row by engine, GPU part and GPU count; its malformed rows
 * refused; the pick among ranges that overlap the best one's; the ranks
 * worded as within each other's error. The table bench/fidelity writes is
 * read end to end by tests/e2e/error_bars.sh. */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/cli/cli_int.h"

/* a table in a scratch file; its path (static buffer) */
static const char *table(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/plc-unit-bars-%d.csv", (int)getpid());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static const char good[] = "# a comment\n"
                           "engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n"
                           "megatron,A100,1,64,95,0.89,1.05,Hagemann;Narayanan\n"
                           "megatron,A100,65,0,13,0.99,1.12,Korthikanti\n"
                           "*,H100,1,0,9,0.91,1.06,Megatron-LM\n"
                           "*,*,1,0,117,0.90,1.07,Hagemann;Korthikanti;Megatron-LM;Narayanan\n";

static void test_first_match(void)
{
    const char *path = table(good);
    plc_error_bar b;
    CU_ASSERT_EQUAL(plc_report_find_bar("unit", path, "megatron", "A100-SXM4-80GB", 64, &b), 0);
    CU_ASSERT_DOUBLE_EQUAL(b.lo, 0.89, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(b.hi, 1.05, 1e-12);
    CU_ASSERT_EQUAL(b.runs, 95);
    CU_ASSERT_STRING_EQUAL(b.kind, "megatron, A100, 1-64 GPUs");
    CU_ASSERT_STRING_EQUAL(b.sources, "Hagemann, Narayanan");
    CU_ASSERT_EQUAL(plc_report_find_bar("unit", path, "megatron", "A100-SXM4-40GB", 65, &b), 0);
    CU_ASSERT_DOUBLE_EQUAL(b.lo, 0.99, 1e-12);
    CU_ASSERT_STRING_EQUAL(b.kind, "megatron, A100, 65+ GPUs");
    /* another engine: the rows for any engine */
    CU_ASSERT_EQUAL(plc_report_find_bar("unit", path, "fsdp2", "H100-SXM5-80GB", 4096, &b), 0);
    CU_ASSERT_DOUBLE_EQUAL(b.lo, 0.91, 1e-12);
    CU_ASSERT_EQUAL(plc_report_find_bar("unit", path, "fsdp2", "A100-SXM4-80GB", 8, &b), 0);
    CU_ASSERT_DOUBLE_EQUAL(b.lo, 0.90, 1e-12);
    CU_ASSERT_STRING_EQUAL(b.kind, "any engine, any GPU, any GPU count");
    /* the part is the name up to its first '-', not a prefix of it */
    CU_ASSERT_EQUAL(plc_report_find_bar("unit", table("engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n"
                                                      "*,A10,1,0,9,0.5,1.5,x\n"),
                                        "plrun", "A100-SXM4-80GB", 8, &b), 0);
    CU_ASSERT_EQUAL(b.lo, 0.0);
    unlink(path);
}

static void test_malformed(void)
{
    static const char *bad[] = {
        "engine,gpu,runs,lo,hi\n",                                             /* another header */
        "engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n*,*,1,0,9,0.9\n",    /* short row */
        "engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n*,*,1,0,9,1.1,0.9,x\n", /* lo > hi */
        "engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n*,*,0,0,9,0.9,1.1,x\n", /* gpus_min 0 */
        "engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n*,*,65,64,9,0.9,1.1,x\n", /* max < min */
        "engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n*,*,1,0,9,-0.9,1.1,x\n", /* negative */
        "engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n*,*,1,0,nine,0.9,1.1,x\n",
        "# only a comment\n",
    };
    plc_error_bar b;
    fflush(stderr); /* the messages are the e2e test's; keep the unit log clean */
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    CU_ASSERT_FATAL(saved >= 0 && null >= 0);
    dup2(null, 2);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(plc_report_find_bar("unit", table(bad[i]), "megatron", "A100-SXM4-80GB", 8, &b), -1);
        CU_ASSERT_EQUAL(b.lo, 0.0);
    }
    /* a malformed row after the match is refused too */
    CU_ASSERT_EQUAL(plc_report_find_bar("unit",
                                        table("engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n"
                                              "*,*,1,0,9,0.9,1.1,x\n*,*,1,0,9,0.9\n"),
                                        "megatron", "A100-SXM4-80GB", 8, &b),
                    -1);
    CU_ASSERT_EQUAL(plc_report_find_bar("unit", "/nonexistent/error_bars.csv", "megatron", "A100", 8, &b), -1);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(null);
    unlink(table(""));
}

/* a fitting candidate with tokens/s t and range [lo, hi] x t */
static plc_candidate cand(double t, double lo, double hi, int tp)
{
    plc_candidate c = {.valid = true, .fits = true, .tokens_per_s = t, .step_time_s = 1e6 / t, .mfu = t / 1e6,
                       .range_lo = lo, .range_hi = hi};
    c.layout.tp = tp;
    return c;
}

static void test_pick(void)
{
    plc_job job;
    memset(&job, 0, sizeof job);
    job.layout.objective = PLC_OBJ_TIME;
    /* equal relative ranges: the best lower bound is the best point, nothing moves */
    plc_candidate same[] = {cand(100, 0.9, 1.1, 1), cand(95, 0.9, 1.1, 2), cand(80, 0.9, 1.1, 4)};
    CU_ASSERT_EQUAL(plc_pick_by_range(&job, same, 3), 0);
    CU_ASSERT_EQUAL(same[0].layout.tp, 1);
    /* the second's range is narrower: its lower bound 95 x 0.98 = 93.1 beats 100 x 0.8 = 80 */
    plc_candidate r[] = {cand(100, 0.8, 1.1, 1), cand(95, 0.98, 1.02, 2), cand(90, 0.99, 1.01, 4),
                         cand(50, 0.99, 1.01, 8)};
    CU_ASSERT_EQUAL(plc_pick_by_range(&job, r, 4), 1); /* 90 x 0.99 = 89.1 < 93.1: the second */
    CU_ASSERT_EQUAL(r[0].layout.tp, 2);
    CU_ASSERT_EQUAL(r[1].layout.tp, 1); /* the others keep their order */
    CU_ASSERT_EQUAL(r[2].layout.tp, 4);
    CU_ASSERT_EQUAL(r[3].layout.tp, 8);
    /* a better lower bound outside the best's range does not count: 50 x 1.01 < 100 x 0.8 */
    plc_candidate far[] = {cand(100, 0.8, 1.1, 1), cand(50, 1.0, 1.0, 2)};
    CU_ASSERT_FALSE(plc_ranges_overlap(&far[0], &far[1]));
    CU_ASSERT_EQUAL(plc_pick_by_range(&job, far, 2), 0);
    /* equal lower bounds: the earlier keeps the place */
    plc_candidate tie[] = {cand(100, 0.75, 1.25, 1), cand(75, 1.0, 1.25, 2)};
    CU_ASSERT_EQUAL(plc_pick_by_range(&job, tie, 2), 0);
    /* objective memory, or no ranges: nothing moves */
    job.layout.objective = PLC_OBJ_MEMORY;
    CU_ASSERT_EQUAL(plc_pick_by_range(&job, r, 4), 0);
    job.layout.objective = PLC_OBJ_TIME;
    plc_candidate bare[] = {cand(100, 0, 0, 1), cand(95, 0, 0, 2)};
    CU_ASSERT_EQUAL(plc_pick_by_range(&job, bare, 2), 0);
    CU_ASSERT_FALSE(plc_ranges_overlap(&bare[0], &bare[1]));
}

static void test_within(void)
{
    /* 100 x 0.9 = 90: the second (95 x 1.1) and third (82 x 1.1 = 90.2) reach it, the fourth (80 x 1.1 = 88) not */
    plc_candidate c[] = {cand(100, 0.9, 1.1, 1), cand(95, 0.9, 1.1, 2), cand(82, 0.9, 1.1, 4), cand(80, 0.9, 1.1, 8)};
    int ranks[8];
    CU_ASSERT_EQUAL(plc_report_within(c, 4, true, 4, ranks, 8), 3);
    CU_ASSERT_EQUAL(ranks[2], 3);
    CU_ASSERT_EQUAL(plc_report_within(c, 4, true, 2, ranks, 8), 2); /* only the rows shown */
    char buf[256] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    plc_report_within_line(f, c, 4, true, 4, "; more");
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "layouts 1-3 are within the prediction's error of each other (their ranges overlap "
                                "layout 1's)\n");
    memset(buf, 0, sizeof buf);
    f = fmemopen(buf, sizeof buf - 1, "w");
    plc_report_within_line(f, c, 4, true, 2, "; more"); /* every row shown overlaps: the list may go on */
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "layouts 1-2 are within"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "; more\n"));
    /* ranges that differ: rank 2 reaches nowhere near rank 1 (95 x 0.6 < 90) */
    plc_candidate gap[20];
    gap[0] = cand(100, 0.9, 1.1, 1);
    gap[1] = cand(95, 0.5, 0.6, 2);
    for (int i = 2; i < 20; i++) gap[i] = cand(90 - 0.1 * i, 0.9, 1.1, 4);
    memset(buf, 0, sizeof buf);
    f = fmemopen(buf, sizeof buf - 1, "w");
    plc_report_within_line(f, gap, 3, false, 3, NULL);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "layouts 1 and 3 are within the prediction's error of each other (their ranges overlap "
                                "layout 1's)\n");
    memset(buf, 0, sizeof buf);
    f = fmemopen(buf, sizeof buf - 1, "w");
    plc_report_within_line(f, gap, 20, false, 20, NULL); /* 19 of 20: the first 16 named */
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "layouts 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17 and 3 more are"));
    plc_candidate alone[] = {cand(100, 0.95, 1.05, 1), cand(50, 0.95, 1.05, 2)};
    memset(buf, 0, sizeof buf);
    f = fmemopen(buf, sizeof buf - 1, "w");
    plc_report_within_line(f, alone, 2, true, 2, NULL);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "layout 1 is ahead of the others shown by more than the prediction's error\n");
}

void register_test_cli_error_bars(void);
void register_test_cli_error_bars(void)
{
    CU_pSuite s = CU_add_suite("error_bars", NULL, NULL);
    CU_add_test(s, "the first row matching engine, GPU part and count", test_first_match);
    CU_add_test(s, "malformed tables refused", test_malformed);
    CU_add_test(s, "the pick among overlapping ranges", test_pick);
    CU_add_test(s, "layouts within each other's error", test_within);
}
