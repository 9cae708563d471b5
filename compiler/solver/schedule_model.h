/* schedule_model.h: what a pipeline schedule costs: micro-batches in flight
 * (memory) and idle time (bubble), from simulating the schedule's order. */
#ifndef PLC_SCHEDULE_MODEL_H
#define PLC_SCHEDULE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "plc/job.h"

/* Activations a rank of pipeline stage `stage` holds at its peak, in units of
 * "one micro-batch through all of the rank's layers" (plc_pipe_inflight). */
double plc_sched_inflight(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers, int64_t micro, int64_t stage);

/* Result of simulating one step of the pipeline. */
typedef struct plc_sched_sim {
    double makespan;  /* first forward to last backward */
    double busy_max;  /* busiest rank's compute time */
    double busy_mean;
    int64_t units;    /* (chunk, micro-batch, direction) units simulated */
} plc_sched_sim;

/* Simulates the schedule with per-layer forward time tf and backward time tb
 * (uniform), extra forward/backward time on the first and last stage
 * (embedding, head and loss), and p2p latency per hop between ranks. Every
 * rank runs its units in the schedule's order (plc_pipe_order), each as soon
 * as its inputs are ready. Returns 0, or -1 when the layers do not split into
 * the schedule's chunks or memory runs out. */
int plc_sched_simulate(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers, int64_t micro,
                       double tf, double tb, double first_extra, double last_extra,
                       double p2p, plc_sched_sim *out);

/* Makespan of one step of a layer-major schedule (layered or modular):
 * per-layer forward time tf and backward tb per micro-batch, extra time per
 * micro-batch on the first and last layer (embedding; head and loss), p2p
 * seconds per message between ranks. O(layers), cheap enough for the
 * search; matches plc_sched_simulate's makespan (the unit tests compare
 * them). pp above PLC_SCHED_MAX_RANKS is treated as one rank. */
#define PLC_SCHED_MAX_RANKS 1024
double plc_sched_layer_major_makespan(plc_schedule s, int64_t pp, int64_t layers, int64_t micro, double tf,
                                      double tb, double first_extra, double last_extra, double p2p);

/* Idle share of a balanced pipeline: bubble / busy time of a rank, for tb/tf
 * = ratio. Closed forms (checked against the simulator in the tests) for
 * gpipe and 1f1b (pp-1)/m, interleaved (pp-1)/(vpp m), layered
 * (pp-1)((L/pp-1)m+1)/((L/pp)m), modular with m >= pp pp(pp-1)/(m L); the
 * simulator (memoised) for modular with fewer micro-batches than stages. */
double plc_sched_bubble_ratio(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers,
                              int64_t micro, double ratio);

#endif
