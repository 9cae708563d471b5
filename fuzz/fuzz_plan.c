/* fuzz_plan.c: libFuzzer harness of the plan loader (common/plan_io.c): the
 * input is a plan file, decoded and validated as plrun and `plc dump` do
 * before using it. Refusing is fine; crashing or reading out of bounds is
 * a bug. */
#include <stdint.h>
#include <string.h>

#include "common/plan_io.h"
#include "plc/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_plan plan;
    char err[512];
    if (plc_plan_decode(&a, data, size, &plan, err, sizeof err) == 0) plc_plan_validate(&plan, err, sizeof err);
    plc_arena_free(&a);
    return 0;
}
