/* test_plantools_words.c: plc's output vocabulary (compiler/plantools/plantools.h), the plan
 * settings plc diff compares (compiler/plantools/plantools.h) and the tie rule of
 * listings (compiler/cli/cli.h). */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "compiler/plantools/plantools.h"
#include "compiler/cli/cli.h"

static void test_plantools_words(void)
{
    char b[64];
    CU_ASSERT_STRING_EQUAL(plc_word_percent(0.775, b, sizeof b), "77.5%");
    CU_ASSERT_STRING_EQUAL(plc_word_percent(0.9, b, sizeof b), "90%");
    CU_ASSERT_STRING_EQUAL(plc_word_percent(0.78125, b, sizeof b), "78.12%");
    CU_ASSERT_STRING_EQUAL(plc_word_onoff(1), "on");
    CU_ASSERT_STRING_EQUAL(plc_word_onoff(0), "off");
    CU_ASSERT_STRING_EQUAL(plc_word_plural(1), "");
    CU_ASSERT_STRING_EQUAL(plc_word_plural(2), "s");
    CU_ASSERT_STRING_EQUAL(plc_word_plural(0), "s");
    CU_ASSERT_STRING_EQUAL(plc_word_quantity(PLC_UNIT_SIZE, 80.0 * 1073741824.0, b, sizeof b), "80 GiB");
    CU_ASSERT_STRING_EQUAL(plc_word_quantity(PLC_UNIT_SIZE, 512.0 * 1048576.0, b, sizeof b), "512 MiB");
    CU_ASSERT_STRING_EQUAL(plc_word_quantity(PLC_UNIT_BANDWIDTH, 2.5e11, b, sizeof b), "250 GB/s");
    CU_ASSERT_STRING_EQUAL(plc_word_quantity(PLC_UNIT_FLOPS, 312e12, b, sizeof b), "312 TFLOPS");
    CU_ASSERT_STRING_EQUAL(plc_word_quantity(PLC_UNIT_TIME, 5e-6, b, sizeof b), "5 us");
    CU_ASSERT_STRING_EQUAL(plc_word_quantity(PLC_UNIT_PERCENT, 0.85, b, sizeof b), "85%");
    CU_ASSERT_STRING_EQUAL(plc_word_quantity(PLC_UNIT_COUNT, 2, b, sizeof b), "2");
}

/* a value that rounds to zero prints without a sign: never "-0.0" */
static void test_shown_zero(void)
{
    char b[32];
    double idle = 1 - 0.977 - 0.023; /* a tiny negative in floating point */
    snprintf(b, sizeof b, "%.1f", 100 * plc_word_shown(idle, 1));
    CU_ASSERT_STRING_EQUAL(b, "0.0");
    snprintf(b, sizeof b, "%.1f", plc_word_shown(-0.04, 1));
    CU_ASSERT_STRING_EQUAL(b, "0.0");
    snprintf(b, sizeof b, "%+.3f", plc_word_shown(-0.0004, 3));
    CU_ASSERT_STRING_EQUAL(b, "+0.000");
    snprintf(b, sizeof b, "%.1f", plc_word_shown(-0.05, 1));
    CU_ASSERT_STRING_EQUAL(b, "-0.1"); /* -0.05 rounds away from zero: kept */
    snprintf(b, sizeof b, "%.1f", plc_word_shown(-0.06, 1));
    CU_ASSERT_STRING_EQUAL(b, "-0.1");
    CU_ASSERT_DOUBLE_EQUAL(plc_word_shown(12.34, 1), 12.34, 0);
}

static void test_settings(void)
{
    plc_plan p;
    memset(&p, 0, sizeof p);
    strcpy(p.model.name, "m");
    p.model.layers = 2;
    p.model.hidden = 64;
    p.train.lr_peak = 3e-3;
    p.layout = (plc_layout){.dp = 2, .tp = 1, .pp = 1, .cp = 1, .sp = 1, .vpp = 1, .micro_batch = 1};
    plc_plan_setting a[128], b[128];
    int n = plc_plan_settings(&p, a, 128);
    CU_ASSERT(n > 40 && n < 128);
    plc_plan q = p;
    q.train.lr_peak = 1e-3;
    q.hw.mem_bytes = 80.0 * 1073741824.0;
    CU_ASSERT_EQUAL(plc_plan_settings(&q, b, 128), n);
    int changed = 0;
    for (int i = 0; i < n; i++) {
        CU_ASSERT_STRING_EQUAL(a[i].name, b[i].name); /* the same names in the same order */
        if (strcmp(a[i].text, b[i].text)) {
            changed++;
            CU_ASSERT(!strcmp(a[i].name, "train.lr.peak") || !strcmp(a[i].name, "cluster.memory"));
        }
        if (!strcmp(a[i].name, "layout.sp")) CU_ASSERT_STRING_EQUAL(a[i].text, "auto"); /* the spec's choice */
        if (!strcmp(b[i].name, "cluster.memory")) CU_ASSERT_STRING_EQUAL(b[i].text, "80 GiB");
    }
    CU_ASSERT_EQUAL(changed, 2);
    /* a truncated list stops at max */
    CU_ASSERT_EQUAL(plc_plan_settings(&p, a, 5), 5);
}

/* the layout block's constraints are settings: a pin, a set, a range,
 * memory_limit and objective each change their own key */
static void test_constraint_settings(void)
{
    plc_plan p;
    memset(&p, 0, sizeof p);
    p.constraints.memory_limit = 0.95;
    p.constraints.zero = (plc_choice){.kind = PLC_CHOICE_RANGE, .lo = 0, .hi = 1};
    plc_plan q = p;
    q.constraints.memory_limit = 0.8;
    q.constraints.tp = (plc_choice){.kind = PLC_CHOICE_SET, .n = 1, .v = {1}};
    q.constraints.pp = (plc_choice){.kind = PLC_CHOICE_SET, .n = 2, .v = {1, 2}};
    q.constraints.zero.hi = 3;
    q.constraints.attention = (plc_choice){.kind = PLC_CHOICE_SET, .n = 1, .v = {PLC_ATTN_FLASH2}};
    q.constraints.objective = PLC_OBJ_MEMORY;
    plc_plan_setting a[128], b[128];
    int n = plc_plan_settings(&p, a, 128);
    CU_ASSERT_EQUAL(plc_plan_settings(&q, b, 128), n);
    const char *want[][3] = {
        {"layout.memory_limit", "95%", "80%"}, {"layout.tp", "auto", "1"},          {"layout.pp", "auto", "{1, 2}"},
        {"layout.zero", "0..1", "0..3"},      {"layout.attention", "auto", "flash2"}, {"layout.objective", "time", "memory"},
    };
    int changed = 0, found = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(a[i].text, b[i].text)) changed++;
        for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
            if (!strcmp(a[i].name, want[k][0])) {
                found++;
                CU_ASSERT_STRING_EQUAL(a[i].text, want[k][1]);
                CU_ASSERT_STRING_EQUAL(b[i].text, want[k][2]);
            }
    }
    CU_ASSERT_EQUAL(found, 6);
    CU_ASSERT_EQUAL(changed, 6);
}

/* a changed dimension of the picked layout is pinned when the new spec
 * fixes it to that value, else the solver's */
static void test_layout_attribution(void)
{
    plc_plan p;
    memset(&p, 0, sizeof p);
    p.layout = (plc_layout){.dp = 8, .tp = 1, .pp = 1, .cp = 1, .vpp = 1, .micro_batch = 4};
    plc_plan q = p;
    q.layout.dp = 4;
    q.layout.tp = 2;
    q.layout.micro_batch = 2;
    q.constraints.tp = (plc_choice){.kind = PLC_CHOICE_SET, .n = 1, .v = {2}};
    q.constraints.micro_batch = (plc_choice){.kind = PLC_CHOICE_SET, .n = 2, .v = {2, 4}}; /* a set: the solver picks */
    plc_layout_change ch[PLC_LD_COUNT];
    CU_ASSERT_EQUAL_FATAL(plc_plan_layout_changes(&p, &q, ch), 3);
    CU_ASSERT(ch[0].dim == PLC_LD_dp && ch[0].old_value == 8 && ch[0].new_value == 4 && !ch[0].pinned);
    CU_ASSERT(ch[1].dim == PLC_LD_tp && ch[1].old_value == 1 && ch[1].new_value == 2 && ch[1].pinned);
    CU_ASSERT(ch[2].dim == PLC_LD_micro_batch && !ch[2].pinned);
    q.constraints.dp = (plc_choice){.kind = PLC_CHOICE_RANGE, .lo = 4, .hi = 4}; /* a range of one value pins */
    CU_ASSERT_EQUAL_FATAL(plc_plan_layout_changes(&p, &q, ch), 3);
    CU_ASSERT(ch[0].pinned);
    CU_ASSERT_EQUAL(plc_plan_layout_changes(&p, &p, ch), 0);
}

static void test_ties(void)
{
    plc_candidate x = {.valid = true, .fits = true, .peak_bytes = 10, .step_time_s = 2};
    plc_candidate y = x;
    y.layout.recompute = PLC_RECOMPUTE_SELECTIVE;
    CU_ASSERT(plc_report_tied(&x, &y));
    y.step_time_s = 2.0000001;
    CU_ASSERT(!plc_report_tied(&x, &y));
    y = x;
    y.fits = false;
    CU_ASSERT(!plc_report_tied(&x, &y));
    y = x;
    y.valid = x.valid = false;
    CU_ASSERT(!plc_report_tied(&x, &y)); /* invalid candidates have no figures to tie on */
    char text[128] = "";
    FILE *f = fmemopen(text, sizeof text - 1, "w");
    plc_layout k = {.dp = 4, .tp = 1, .pp = 1, .cp = 1, .vpp = 1, .micro_batch = 2}, t = k;
    t.recompute = PLC_RECOMPUTE_SELECTIVE;
    t.sp = 1;
    plc_report_tie_text(f, &k, &t);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(text, "sp=on recompute=selective");
}

void register_test_plantools_words(void);
void register_test_plantools_words(void)
{
    CU_pSuite s = CU_add_suite("words", NULL, NULL);
    CU_add_test(s, "percentages, switches, plurals, quantities", test_plantools_words);
    CU_add_test(s, "plan settings compared by plc diff", test_settings);
    CU_add_test(s, "layout constraints are settings: pins, sets, ranges, memory_limit, objective", test_constraint_settings);
    CU_add_test(s, "layout changes: pinned by the spec or chosen by the solver", test_layout_attribution);
    CU_add_test(s, "exact ties", test_ties);
    CU_add_test(s, "no negative zero", test_shown_zero);
}
