/* test_common_lr.c: the learning-rate schedule at known steps (docs/model.md). */
#include <CUnit/CUnit.h>
#include <math.h>

#include "common/lr_schedule.h"

#define M_PI_VALUE 3.14159265358979323846

static void test_warmup_cosine_floor(void)
{
    plc_lr_schedule s = {1e-3, 1e-4, 10, 110};
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 0), 1e-4, 1e-18);  /* 1e-3 * 1 / 10 */
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 4), 5e-4, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 9), 1e-3, 1e-18);  /* end of warmup: the peak */
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 10), 1e-3, 1e-18); /* cosine starts at the peak */
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 60), 5.5e-4, 1e-15); /* half way: the mid point */
    /* a quarter of the way: floor + (peak - floor) (1 + cos(pi/4)) / 2 */
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 35), 1e-4 + 9e-4 * (1 + sqrt(0.5)) / 2, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 35), 0.00086819805153394639, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 109), 1e-4 + 9e-4 * (1 + cos(M_PI_VALUE * 99 / 100)) / 2, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 110), 1e-4, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&s, 100000), 1e-4, 0);
    /* monotone non-increasing after warmup */
    for (int64_t i = 10; i < 120; i++) CU_ASSERT(plc_lr_at(&s, i + 1) <= plc_lr_at(&s, i));
}

static void test_edge_cases(void)
{
    plc_lr_schedule none = {3e-4, 0, 0, 100}; /* no warmup: cosine from step 0 */
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&none, 0), 3e-4, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&none, 50), 1.5e-4, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&none, 100), 0, 0);

    plc_lr_schedule flat = {2e-3, 2e-3, 0, 0}; /* decay at 0: constant floor */
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&flat, 0), 2e-3, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&flat, 7), 2e-3, 0);

    plc_lr_schedule short_decay = {1.0, 0.5, 4, 4}; /* warmup, then straight to the floor */
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&short_decay, 3), 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&short_decay, 4), 0.5, 0);
    CU_ASSERT(isfinite(plc_lr_at(&short_decay, 4)));
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&short_decay, -5), 0.25, 0); /* clamped to step 0 */

    plc_train t = {0};
    t.lr_peak = 1;
    t.lr_floor = 0.1;
    t.warmup_steps = 2;
    t.decay_steps = 12;
    plc_lr_schedule from = plc_lr_schedule_from_train(&t);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&from, 0), 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_lr_at(&from, 7), 0.55, 1e-15);
}

void register_test_common_lr(void);
void register_test_common_lr(void)
{
    CU_pSuite s = CU_add_suite("lr_schedule", NULL, NULL);
    CU_add_test(s, "warmup, cosine, floor", test_warmup_cosine_floor);
    CU_add_test(s, "edge cases", test_edge_cases);
}
