/* compiler/lower/lower.h: the lower stage's public interface, what the other stages,
 * the tools and the tests may use; the sections below are named after the
 * files that implement them. Internal helpers: lower_int.h. */
#ifndef PLC_COMPILER_LOWER_H
#define PLC_COMPILER_LOWER_H

/* ---- memplan.c ------------------------------------------------------------- */
/* the static memory plan of one program.
 *
 * Persistent buffers (parameters, gradients, optimizer state, scalars that
 * outlive the step) are laid out first, in id order, each 64-byte aligned;
 * alias buffers (gradient buckets) then cover their member span. Every
 * other buffer lives from its first to its last use (a buffer used by a
 * comm-stream instruction until the instruction that waits for it). They
 * are placed one at a time, each at the smallest (or the lowest) gap that
 * holds it among the buffers already placed whose lifetimes overlap its
 * own, in several orders (largest first; long-lived buffers first in order
 * of first use, the others then largest first; the buffers of the busiest
 * instructions first; some on mirrored time), as many as PLACE_ORDERS_WORK
 * allows, and the smallest region is kept; a program whose placement
 * would take too long (more than PLACE_BY_SIZE_WORK pairs of buffers with
 * overlapping lifetimes) is placed online instead: in instruction order,
 * best-fit into the holes of buffers whose lifetime ended (up to
 * PLACE_MIRROR_WORK pairs also on mirrored time, the smaller kept). A
 * region more than 1% above the largest live sum (the bound no placement
 * beats) has further orders tried, up to PLACE_RETRY_WORK pairs; the
 * search stops at the bound. The program's arena_bytes is the exact peak
 * of the placement. */

#include <stdbool.h>
#include <stdint.h>

#include "plc/plan.h"

typedef struct plc_memplan_stats {
    uint64_t persistent_bytes; /* parameters, gradients, optimizer state */
    uint64_t dynamic_peak;     /* activations and temporaries at their peak */
    uint64_t dynamic_total;    /* the same buffers without any reuse */
    uint32_t peak_instr;       /* instruction at which the dynamic peak is reached */
    bool by_size;              /* placed by the greedy orders (else online best-fit, for very large programs) */
    uint64_t bytes_by_kind[PLC_BUF_KIND_COUNT]; /* sizes summed, aliases excluded */
} plc_memplan_stats;

/* Assigns every buffer's offset and the program's arena_bytes. persistent,
 * alias_first and alias_last are per buffer (alias_first < 0: not an alias).
 * Returns 0, or -1 with a message (a buffer no instruction uses that is
 * not persistent, an alias whose members are not contiguous). */
int plc_memplan(plc_program *prog, const bool *persistent, const int32_t *alias_first, const int32_t *alias_last,
                plc_memplan_stats *stats, char *err, size_t errlen);

/* lifetimes used by the plan: first and last instruction index touching each
 * buffer (comm-stream uses extended to their completion); -1 when unused.
 * first/last have prog->nbuffers entries. */
void plc_buffer_lifetimes(const plc_program *prog, int32_t *first, int32_t *last);

/* ---- lower.c --------------------------------------------------------------- */
/* lowering of one concrete layout to a plan (include/plc/plan.h):
 * a static instruction program per pipeline stage for one training step,
 * the communicator groups, and the static memory plan of every program.
 *
 * The lowered plan is validated (plc_plan_validate) and checked
 * (compiler/plantools/plantools.h: send/recv matching, collective order, a
 * simulation of all ranks terminates) before plc_lower returns it. */

#include <stddef.h>

#include "plc/arena.h"
#include "plc/job.h"
#include "plc/plan.h"
#include "plc/status.h"

/* The model and precision refusals of the lowering that no layout changes
 * (a mixture-of-experts layer: Llama block, fp32, no group-limited routing
 * or expert bias; lower_moe.c): 0, or -1 with the reason in err. plc
 * compile asks before its search; plc_lower refuses the same. */
int plc_lower_model_check(const plc_job *job, char *err, size_t errlen);

/* Lowers job + layout to *out (allocated in *a). pred may be NULL (zeros);
 * stage_stats, when not NULL, receives layout->pp memory-plan summaries.
 * Returns PLC_OK, or with a message in err: PLC_E_INPUT the layout breaks
 * a rule (common/layout_rules.h), PLC_E_INTERNAL or PLC_E_DEADLOCK a
 * compiler bug caught by the checks, PLC_E_SYSTEM out of memory. */
plc_status plc_lower(const plc_job *job, const plc_layout *layout, const plc_prediction *pred, plc_arena *a,
              plc_plan *out, plc_memplan_stats *stage_stats, char *err, size_t errlen);

/* The arena bytes of the layout's stages, lowered in a scratch arena: the
 * solver's judge of plrun's fit (plc_memory_judge's arena; ctx unused).
 * Every stage is lowered, the memory of those with stages[s] planned;
 * arena_bytes[s] is plc_lower's for those, 0 for the others. Returns 0, or
 * -1 when the layout does not lower, or when its step has more than
 * PLC_LOWER_ARENA_MAX_UNITS pipeline units (a micro-batch's forward or
 * backward through one chunk, over all stages): minutes of placement, and
 * more memory than a solve should take (the estimate then stands). */
#define PLC_LOWER_ARENA_MAX_UNITS 100000
int plc_lower_arena(void *ctx, const plc_job *job, const plc_layout *l, const bool *stages, double *arena_bytes);

/* ---- lower_unit.c ----------------------------------------------------------- */
/* plrun's figures of one transformer layer and of the head under a layout,
 * for one micro-batch on one rank, measured on the lowering of a template
 * (the layout's shape, one layer, one stage, one micro-batch) with the
 * plan's own buffer lifetimes (plc_buffer_lifetimes), each buffer rounded
 * up to the plan's 64-byte alignment: what the solver's replay of a
 * pipeline step (compiler/solver/memory_plrun.c) adds up. */
typedef struct plc_unit_figures {
    double layer_kept; /* the layer's buffers alive after its forward: what its backward reads, and its output */
    /* The highest point of the layer's forward above its input, and of its
     * backward from its kept bytes, its input and the incoming gradient
     * (those included), by [before][hold]: ZeRO 3's gathered weights are
     * alive from the visit's start (the stage was in the layer before,
     * its weights gathered then) and to its end (its next visit is of the
     * same layer: they are read again). bwd_acc[hold]: the backward with
     * before, the gradient blocks it accumulates into not counted (ZeRO >=
     * 2: they exist already and are counted apart). */
    double fwd_peak[2][2], bwd_peak[2][2], bwd_acc[2];
    double head_peak;  /* the highest sum of the head's forward and loss (with its gradient into the final
                        * norm), above its input: its buffers and the targets it reads last */
    double head_keep;  /* made by the head's forward and read by its backward unit */
    double tokens;     /* the token ids, read again by the embedding's backward */
    double embed_peak; /* the highest sum of the embedding's forward: the micro-batch's data and its buffers */
    double embed_bwd_peak; /* of its backward, above the incoming gradient, its gradient blocks apart */
} plc_unit_figures;

/* Fills *out; returns 0, or -1 when the template does not lower (a shape
 * the lowering refuses: err says why) or out of memory. */
int plc_lower_unit_figures(const plc_job *job, const plc_layout *l, plc_unit_figures *out, char *err,
                           size_t errlen);

#endif
