/* test_common_plan_groups.c: which ranks belong to a communicator group
 * (common/plan_groups.c, the one rule plrun, the validator, the simulator and
 * the trace share): a worked example, every group kind on every rank of
 * several layouts against the definition, and the validator refusing a
 * group that keeps the pipeline ends without varying over pp. */
#include <CUnit/CUnit.h>

#include "test_plan_util.h"

static void test_worked_example(void)
{
    plc_layout l = {.dp = 2, .tp = 2, .pp = 3, .cp = 1, .vpp = 1, .micro_batch = 1};
    plc_group tp = {PLC_DIM_TP, 0, "tp"}, dp = {PLC_DIM_DP, 0, "dp"};
    plc_group ends = {PLC_DIM_PP, PLC_GROUP_PP_ENDS, "embed"};
    /* world rank 7 = tp 1, dp 1, pp 1 */
    plc_rank_coords co = plc_rank_to_coords(&l, 7);
    CU_ASSERT_EQUAL(co.tp, 1);
    CU_ASSERT_EQUAL(co.dp, 1);
    CU_ASSERT_EQUAL(co.pp, 1);
    plc_group_seat s = plc_group_seat_of(&l, &tp, co);
    CU_ASSERT_TRUE(s.member);
    CU_ASSERT_EQUAL(s.colour, 6); /* with rank 6 */
    CU_ASSERT_EQUAL(s.index, 1);
    CU_ASSERT_EQUAL(s.size, 2);
    s = plc_group_seat_of(&l, &dp, co);
    CU_ASSERT_EQUAL(s.colour, 5); /* ranks 5 and 7 */
    CU_ASSERT_EQUAL(s.index, 1);
    CU_ASSERT_EQUAL(s.size, 2);
    /* the middle stage is not in the tied-embedding group; the last one is */
    s = plc_group_seat_of(&l, &ends, co);
    CU_ASSERT_FALSE(s.member);
    s = plc_group_seat_of(&l, &ends, plc_rank_to_coords(&l, 11));
    CU_ASSERT_TRUE(s.member);
    CU_ASSERT_EQUAL(s.colour, 3); /* with rank 3 (pp 0, same tp and dp) */
    CU_ASSERT_EQUAL(s.index, 1);
    CU_ASSERT_EQUAL(s.size, 2);
    CU_ASSERT_EQUAL(plc_plan_group_size(&l, &ends), 2);
    l.pp = 1; /* one stage: both ends are the same rank */
    CU_ASSERT_EQUAL(plc_plan_group_size(&l, &ends), 1);
}

/* every group kind on every rank, against the definition: the members of a
 * communicator are the ranks whose fixed coordinates equal its first
 * member's; its colour is that rank; indices run 0..size-1 in world rank
 * order; with PP_ENDS only pipeline ranks 0 and pp-1 take part */
static void check_layout(const plc_layout *l)
{
    const int64_t world = l->tp * l->cp * l->dp * l->pp;
    for (uint32_t dims = 1; dims <= 15; dims++)
        for (uint32_t flags = 0; flags <= PLC_GROUP_PP_ENDS; flags++) {
            if ((flags & PLC_GROUP_PP_ENDS) && !(dims & PLC_DIM_PP)) continue; /* refused by the validator */
            const plc_group g = {dims, flags, "g"};
            const int64_t size = plc_plan_group_size(l, &g);
            for (int64_t r = 0; r < world; r++) {
                const plc_rank_coords c = plc_rank_to_coords(l, r);
                const plc_group_seat s = plc_group_seat_of(l, &g, c);
                const int ends = c.pp == 0 || c.pp == l->pp - 1;
                CU_ASSERT_EQUAL(s.member, !(flags & PLC_GROUP_PP_ENDS) || ends);
                CU_ASSERT_EQUAL(s.size, size);
                if (!s.member) continue;
                /* the ranks sharing the colour, in world order: r is the index-th */
                int64_t count = 0, before = 0, first = -1;
                for (int64_t q = 0; q < world; q++) {
                    const plc_rank_coords d = plc_rank_to_coords(l, q);
                    const int same = (dims & PLC_DIM_TP || d.tp == c.tp) && (dims & PLC_DIM_CP || d.cp == c.cp) &&
                                     (dims & PLC_DIM_DP || d.dp == c.dp) && (dims & PLC_DIM_PP || d.pp == c.pp) &&
                                     (!(flags & PLC_GROUP_PP_ENDS) || d.pp == 0 || d.pp == l->pp - 1);
                    if (!same) continue;
                    if (first < 0) first = q;
                    count++;
                    before += q < r;
                    const plc_group_seat t = plc_group_seat_of(l, &g, d);
                    CU_ASSERT(t.member && t.colour == s.colour);
                }
                CU_ASSERT_EQUAL(count, size);
                CU_ASSERT_EQUAL(s.index, before);
                CU_ASSERT_EQUAL(s.colour, first);
            }
        }
}

static void test_every_group_kind(void)
{
    const int64_t shapes[][4] = {{2, 1, 3, 1}, {2, 2, 2, 2}, {1, 3, 4, 2}, {3, 2, 1, 1}, {1, 1, 2, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        plc_layout l = {.dp = shapes[i][0], .tp = shapes[i][1], .pp = shapes[i][2], .cp = shapes[i][3],
                        .vpp = 1, .micro_batch = 1};
        check_layout(&l);
    }
}

/* a tied two-stage plan holds the embedding group (pp, PP_ENDS); the same
 * flag on a group that does not vary over pp is refused */
static void test_validator_refuses_ends_without_pp(void)
{
    plc_job job;
    tp_job(&job, 2, true, 2);
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    char err[512] = "";
    CU_ASSERT_FATAL(tp_lower(&job, tp_layout(1, 2, 2, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1), &a, &p) == 0);
    plc_group *ends = NULL;
    for (uint32_t i = 0; i < p.ngroups; i++)
        if (p.groups[i].flags & PLC_GROUP_PP_ENDS) ends = &p.groups[i];
    CU_ASSERT_FATAL(ends != NULL);
    CU_ASSERT_EQUAL(ends->dims, PLC_DIM_PP);
    CU_ASSERT_EQUAL(plc_plan_validate(&p, err, sizeof err), 0);
    ends->dims = PLC_DIM_TP;
    CU_ASSERT_EQUAL(plc_plan_validate(&p, err, sizeof err), -1);
    CU_ASSERT(strstr(err, "keeps the pipeline ends but does not vary over pp") != NULL);
    ends->dims = PLC_DIM_TP | PLC_DIM_PP; /* with pp it is a group again */
    err[0] = '\0';
    plc_plan_validate(&p, err, sizeof err);
    CU_ASSERT(strstr(err, "pipeline ends") == NULL);
    plc_arena_free(&a);
}

void register_test_common_plan_groups(void);
void register_test_common_plan_groups(void)
{
    CU_pSuite s = CU_add_suite("plan_groups", NULL, NULL);
    CU_add_test(s, "communicator groups in rank order: a worked example", test_worked_example);
    CU_add_test(s, "every group kind on every rank, against the definition", test_every_group_kind);
    CU_add_test(s, "a group keeping the pipeline ends without pp is refused", test_validator_refuses_ends_without_pp);
}
