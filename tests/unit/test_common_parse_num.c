/* test_common_parse_num.c: the one parser of numbers on command lines, in metadata
 * and in catalog entries (common/parse_num.c): what it takes, what it
 * refuses, and that a refusal leaves the output as it was. */
#include <CUnit/CUnit.h>
#include <math.h>

#include "common/parse_num.h"

static void test_int(void)
{
    int64_t v = -7;
    CU_ASSERT(plc_parse_int("42", 0, 100, &v) == 0 && v == 42);
    CU_ASSERT(plc_parse_int("-3", -5, 5, &v) == 0 && v == -3);
    CU_ASSERT(plc_parse_int("9223372036854775807", 0, INT64_MAX, &v) == 0 && v == INT64_MAX);
    v = -7;
    const char *bad[] = {"", "4x", "x4", "4 ", "1.5", "101", "-1", "9223372036854775808", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CU_ASSERT(plc_parse_int(bad[i], 0, 100, &v) == -1);
    CU_ASSERT(plc_parse_int(NULL, 0, 100, &v) == -1);
    CU_ASSERT(v == -7);
}

static void test_real(void)
{
    double v = -7;
    CU_ASSERT(plc_parse_real("2.5", "", 0, 1e6, &v) == 0 && v == 2.5);
    CU_ASSERT(plc_parse_real("1e6", "", 0, 1e6, &v) == 0 && v == 1e6);
    CU_ASSERT(plc_parse_real("80%", "%", 0, 100, &v) == 0 && v == 80);
    CU_ASSERT(plc_parse_real("0.5%", "%", 0, 100, &v) == 0 && v == 0.5);
    CU_ASSERT(plc_parse_real("1e-400", "", 0, 1, &v) == 0 && v == 0); /* underflow: a number, 0 */
    v = -7;
    /* no number, the wrong suffix, out of range, not finite, overflow */
    const char *bad[] = {"", "%", "abc", "80", "80%x", "80 %", "100.5%", "-1%", "nan%", "inf%", "1e400%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CU_ASSERT(plc_parse_real(bad[i], "%", 0, 100, &v) == -1);
    CU_ASSERT(plc_parse_real("2.5%", "", 0, 10, &v) == -1);
    CU_ASSERT(plc_parse_real("1e400", "", -HUGE_VAL, HUGE_VAL, &v) == -1);
    CU_ASSERT(plc_parse_real("-inf", "", -HUGE_VAL, HUGE_VAL, &v) == -1);
    CU_ASSERT(plc_parse_real(NULL, "", 0, 1, &v) == -1);
    CU_ASSERT(v == -7);
}

void register_test_common_parse_num(void);
void register_test_common_parse_num(void)
{
    CU_pSuite s = CU_add_suite("parse_num", NULL, NULL);
    CU_add_test(s, "whole numbers: all of the text, in range", test_int);
    CU_add_test(s, "real numbers: finite, in range, with exactly the suffix", test_real);
}
