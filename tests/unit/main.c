/* main.c: runs every CUnit suite registered by tests/unit/test_*.c.
 * Usage: unit_tests [SUITE...]   (no argument: all suites)
 * The working directory is tests/, so fixtures are found as relative paths. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

void plc_register_all_tests(void);

static int suite_wanted(const char *name, int argc, char **argv)
{
    if (argc < 2) return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "unit_tests: cannot initialise CUnit: %s\n", CU_get_error_msg());
        return 2;
    }
    plc_register_all_tests();
    /* deactivate the suites that were not asked for */
    for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
        if (!suite_wanted(s->pName, argc, argv)) CU_set_suite_active(s, CU_FALSE);
    CU_basic_set_mode(CU_BRM_NORMAL);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
