/* test_runtime_metrics.c: the step log line, the progress line and the JSON-lines
 * metrics file (parsed back with the JSON parser: every value round-trips). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/json.h"
#include "runtime/metrics.h"

static plc_step_metrics sample(int64_t step)
{
    plc_step_metrics m = {step, 4.1234567890123456 / (double)(step + 1), 3e-4 * (step + 1) / 7.0, 1.2345678901,
                          41234.5678, 3.21e9, 0.0981234, false, 0};
    return m;
}

static void test_formats(void)
{
    static const struct {
        double v;
        const char *si;
    } sis[] = {{950, "950"}, {41234.5, "41.2k"}, {3.21e9, "3.21G"}, {999.96e6, "1.00G"}, {123.4e12, "123T"}};
    static const struct {
        double s;
        const char *text;
    } durations[] = {{44.6, "45s"}, {725, "12m05s"}, {3 * 3600 + 125, "3h02m"}, {NAN, "?"}};
    char b[512];
    for (size_t i = 0; i < sizeof sis / sizeof sis[0]; i++) {
        plc_format_si(b, sizeof b, sis[i].v);
        CU_ASSERT_STRING_EQUAL(b, sis[i].si);
    }
    for (size_t i = 0; i < sizeof durations / sizeof durations[0]; i++) {
        plc_format_duration(b, sizeof b, durations[i].s);
        CU_ASSERT_STRING_EQUAL(b, durations[i].text);
    }

    plc_step_metrics m = sample(11);
    plc_metrics_format_line(b, sizeof b, &m, 1000);
    CU_ASSERT_STRING_EQUAL(b, "step   12/1000  loss 0.343621  lr 5.143e-04  grad norm 1.2346  41.2k tok/s  "
                              "3.21 GFLOP/s  98.1 ms");
    m.model_flops_per_s = 950;
    plc_metrics_format_line(b, sizeof b, &m, 1000);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "  950 FLOP/s  "));
    /* a plan with MoE capacity reports its dropped copies, in the line and in JSON */
    m.moe_capped = true;
    m.moe_dropped = 128;
    plc_metrics_format_line(b, sizeof b, &m, 1000);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "98.1 ms  dropped 128"));
    plc_metrics_format_json(b, sizeof b, &m);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, ",\"moe_dropped\":128}"));
    m.moe_capped = false;
    plc_metrics_format_json(b, sizeof b, &m);
    CU_ASSERT_PTR_NULL(strstr(b, "moe_dropped"));
    plc_metrics_format_progress(b, sizeof b, 400, 1000, 62);
    CU_ASSERT_STRING_EQUAL(b, "[########------------]  40%  step 400/1000  ETA 1m02s");
}

static void test_json_line_round_trips(void)
{
    char b[512], err[256];
    plc_arena a;
    plc_arena_init(&a);
    for (int64_t s = 0; s < 50; s++) {
        plc_step_metrics m = sample(s);
        plc_metrics_format_json(b, sizeof b, &m);
        const plc_json *v;
        CU_ASSERT_EQUAL_FATAL(plc_json_parse(&a, b, strlen(b), &v, err, sizeof err), 0);
        CU_ASSERT_EQUAL(v->n, 7);
        const plc_json *step = plc_json_get(v, "step");
        CU_ASSERT(step && step->is_int && step->integer == s);
        /* every double reads back exactly */
        CU_ASSERT(plc_json_get(v, "loss")->number == m.loss);
        CU_ASSERT(plc_json_get(v, "lr")->number == m.lr);
        CU_ASSERT(plc_json_get(v, "grad_norm")->number == m.grad_norm);
        CU_ASSERT(plc_json_get(v, "tokens_per_s")->number == m.tokens_per_s);
        CU_ASSERT(plc_json_get(v, "model_flops_per_s")->number == m.model_flops_per_s);
        CU_ASSERT(plc_json_get(v, "step_time_s")->number == m.step_time_s);
    }
    /* a diverged run: NaN and infinity become null, the line stays JSON */
    plc_step_metrics bad = sample(3);
    bad.loss = NAN;
    bad.grad_norm = INFINITY;
    plc_metrics_format_json(b, sizeof b, &bad);
    const plc_json *v;
    CU_ASSERT_EQUAL_FATAL(plc_json_parse(&a, b, strlen(b), &v, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_json_get(v, "loss")->type, PLC_JSON_NULL);
    CU_ASSERT_EQUAL(plc_json_get(v, "grad_norm")->type, PLC_JSON_NULL);
    plc_arena_free(&a);
}

static char *read_all(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    char *s = calloc(1, (size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
    return s;
}

static void test_log(void)
{
    char dir[] = "/tmp/plc_metrics_test.XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/m.jsonl", dir);
    FILE *out = tmpfile(), *tty = tmpfile();
    CU_ASSERT_FATAL(out && tty);
    plc_metrics_log l;
    CU_ASSERT_EQUAL_FATAL(plc_metrics_open(&l, out, tty, path, 4, err, sizeof err), 0);
    for (int64_t s = 0; s < 4; s++) {
        plc_step_metrics m = sample(s);
        m.step_time_s = s == 0 ? 5.0 : 2.0; /* the slow first step stays out of the ETA */
        CU_ASSERT_EQUAL(plc_metrics_step(&l, &m, err, sizeof err), 0);
    }
    CU_ASSERT_EQUAL(plc_metrics_close(&l, err, sizeof err), 0);
    char *log = read_all(out), *prog = read_all(tty);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "step 1/4  loss 4.123457"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "step 4/4"));
    int lines = 0;
    for (char *p = log; *p; p++) lines += *p == '\n';
    CU_ASSERT_EQUAL(lines, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(prog, "step 1/4  ETA 15s")); /* 3 steps x the first step's 5 s */
    CU_ASSERT_PTR_NOT_NULL(strstr(prog, "step 2/4  ETA 4s"));  /* 2 steps x 2 s: the warm-up left out */
    CU_ASSERT_PTR_NULL(strstr(prog, "step 4/4"));              /* finished: no progress line */
    size_t plen = strlen(prog);
    CU_ASSERT(plen >= 4 && strcmp(prog + plen - 4, "\r\033[K") == 0); /* cleared at the end */
    free(log);
    free(prog);
    fclose(out);
    fclose(tty);

    /* the JSON file: one object per line, steps 0..3 */
    FILE *j = fopen(path, "r");
    CU_ASSERT_FATAL(j != NULL);
    char line[512];
    int64_t n = 0;
    plc_arena a;
    plc_arena_init(&a);
    while (fgets(line, sizeof line, j)) {
        const plc_json *v;
        CU_ASSERT_EQUAL_FATAL(plc_json_parse(&a, line, strlen(line), &v, err, sizeof err), 0);
        CU_ASSERT_EQUAL(plc_json_get(v, "step")->integer, n);
        CU_ASSERT_PTR_NOT_NULL(plc_json_get(v, "tokens_per_s"));
        n++;
    }
    CU_ASSERT_EQUAL(n, 4);
    fclose(j);
    plc_arena_free(&a);
    unlink(path);

    /* no progress stream, no JSON: just the lines */
    out = tmpfile();
    CU_ASSERT_EQUAL(plc_metrics_open(&l, out, NULL, NULL, 2, err, sizeof err), 0);
    plc_step_metrics m = sample(0);
    CU_ASSERT_EQUAL(plc_metrics_step(&l, &m, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_metrics_close(&l, err, sizeof err), 0);
    fclose(out);

    /* an unwritable metrics path is a clear error */
    snprintf(path, sizeof path, "%s/no/such/dir/m.jsonl", dir);
    CU_ASSERT_EQUAL(plc_metrics_open(&l, NULL, NULL, path, 2, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--metrics"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot create"));
    rmdir(dir);
}

void register_test_runtime_metrics(void);
void register_test_runtime_metrics(void)
{
    CU_pSuite s = CU_add_suite("metrics", NULL, NULL);
    CU_add_test(s, "formats", test_formats);
    CU_add_test(s, "JSON line round trips", test_json_line_round_trips);
    CU_add_test(s, "log, progress and file", test_log);
}
