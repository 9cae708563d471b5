/* comm.h: ranks, communicator groups and host-memory communication over MPI.
 *
 * plrun is one process per rank. Under a launcher (mpirun, srun) MPI gives
 * the rank and size; started alone, plrun runs as rank 0 of 1 without
 * initialising MPI at all (every group then has one member, so collectives
 * are copies or nothing).
 *
 * One MPI communicator per plan group, built with MPI_Comm_split: colour =
 * the rank coordinates fixed inside the group, key = the world rank (rank
 * order). The CPU backend moves its arena's bytes with the non-blocking
 * calls below; the CUDA backend uses the groups' membership to build NCCL
 * communicators and the blocking helpers for setup and reporting.
 *
 * bf16 buffers travel as 16-bit words; their sums and maxima use the MPI
 * operations of comm_bf16.h (fp32 arithmetic, one rounding per combine). */
#ifndef PLC_RUNTIME_COMM_H
#define PLC_RUNTIME_COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "plc/plan.h"

typedef struct plc_comm_group {
    MPI_Comm mpi;   /* MPI_COMM_NULL when not a member or without MPI */
    int member;     /* this rank belongs to the group */
    int rank, size; /* index of this rank in the group, number of members */
} plc_comm_group;

typedef struct plc_comm {
    int use_mpi;          /* MPI was initialised by plc_comm_world_init */
    int rank, size;       /* world */
    plc_rank_coords coords;
    plc_layout layout;
    uint32_t ngroups;
    plc_comm_group *groups;
    int nslots;           /* pending requests, one per instruction index */
    MPI_Request *slots;
    MPI_Op bf16_sum, bf16_max; /* bf16 reductions (comm_bf16.h); MPI_OP_NULL without MPI */
    /* the watchdog (below) */
    double deadline_s;    /* longest wait of a step's transfer; 0 = no watchdog */
    int64_t watch_step;   /* what this rank is at, for its answers to a peer's question: */
    int64_t watch_instr;  /* instruction index, -2 the step's reductions, -1 outside a step */
    MPI_Comm watch;       /* a duplicate of the world for the watchdog's questions */
    int *slot_peer;       /* per slot: world rank of a SEND/RECV peer, -1 a collective */
    int *slot_group;      /* per slot: plan group of a collective */
    MPI_Request *persist; /* per slot: the allreduce's persistent request, MPI_REQUEST_NULL none */
    struct plc_comm_call *persist_call; /* per slot: the call it was made for */
    const plc_plan *plan; /* set by plc_comm_setup: group names and members, for messages */
    int watch_io;         /* set around a checkpoint's gathers: those are watched too, and
                           * wait on as long as every peer answers */
    double watch_io_extra_s; /* more time for a wait on a rank writing a file */
    int timed_out;        /* set when a deadline passed (the message is in error) */
    char error[512];      /* the last failure of the blocking helpers */
} plc_comm;

/* One collective or point-to-point transfer, resolved to host pointers. */
typedef struct plc_comm_call {
    plc_op op;         /* ALLREDUCE, REDUCE_SCATTER, ALLGATHER, BROADCAST, SEND, RECV */
    int group;         /* plan group id (collectives) */
    void *dst;         /* ALLREDUCE, BROADCAST, SEND, RECV: the data */
    const void *src;   /* REDUCE_SCATTER, ALLGATHER: the input */
    int64_t count;     /* elements per rank, as in plan.h */
    plc_dtype dtype;
    int reduce_max;    /* ALLREDUCE: maximum instead of sum */
    int root;          /* BROADCAST: root's index in the group */
    int peer;          /* SEND, RECV: world rank of the other side */
    int tag;           /* SEND, RECV: matches a send with its receive:
                        * (micro-batch + 1) * 2 + direction (1 = backward) */
} plc_comm_call;

/* Starts MPI when a launcher started this process (or always when force is
 * set) and reads rank and size; otherwise rank 0 of 1. Returns 0 or -1. */
int plc_comm_world_init(plc_comm *c, int argc_unused, char **argv_unused, char *err, size_t errlen);
/* Checks the world size against the plan and builds the groups. */
int plc_comm_setup(plc_comm *c, const plc_plan *plan, char *err, size_t errlen);
/* Frees groups and requests; finalises MPI when it was started. */
void plc_comm_finalize(plc_comm *c);
/* MPI_Abort when MPI runs (so no rank hangs on a failed peer), else exit. */
void plc_comm_abort(plc_comm *c, int code) __attribute__((noreturn));

/* This rank's node, the ranks that share its memory as MPI sees them: how
 * many there are, and this rank's index among them in world rank order in
 * *index (1 and 0 without MPI). Every rank calls it. */
int plc_comm_node(const plc_comm *c, int *index);

/* Whether two ranks of this node hold the same key (text of up to
 * PLC_NODE_KEY - 1 characters; an empty key matches none): 1 with the
 * world ranks of the first such pair in *a < *b, the same pair on every
 * rank of the node; 0 when none (also without MPI); -1 when the exchange
 * failed. Every rank of the node calls it. */
#define PLC_NODE_KEY 64
int plc_comm_node_shared(const plc_comm *c, const char *key, int *a, int *b);

/* Of n keys of PLC_NODE_KEY bytes each, the first pair (in order of the
 * later one, then the earlier) that holds the same non-empty text: 1 with
 * its indices in *i < *j, or 0 */
int plc_keys_first_pair(const char *keys, int n, int *i, int *j);

/* size of a group, 1 for a group this rank is not in */
int plc_comm_group_size(const plc_comm *c, int group);

/* The watchdog. With deadline_s > 0, a wait of a step's transfer (below)
 * and the step's reductions (sum/max_f64 while watch_instr != -1) poll
 * instead of blocking. Past the deadline the rank asks every peer it waits
 * for whether it is alive (on the `watch` communicator; every polling rank
 * answers with its step and instruction) and fails with a message naming
 * the peers that did not answer within a grace period, so the caller can
 * end the job. Ranks busy computing answer once they next wait. */
#define PLC_WATCH_GRACE_S 3.0

/* Host-memory transfers for the CPU backend. start() begins the call as the
 * request `slot`; wait() completes it (nothing for a free slot). An
 * allreduce is made a persistent request at its slot's first start (MPI 4,
 * or Open MPI's MPIX extension) and started again at every later one, so
 * that MPI's temporary buffer for it is allocated once, in the dry
 * communication step, instead of at every call. */
int plc_comm_start(plc_comm *c, const plc_comm_call *call, int slot, char *err, size_t errlen);
int plc_comm_wait(plc_comm *c, int slot, char *err, size_t errlen);

/* Blocking helpers over the world (no-ops with one rank); under the
 * watchdog during a step (sum/max) or with watch_io set (all of them). */
int plc_comm_sum_f64(plc_comm *c, double *vals, int n);          /* all-reduce, every rank */
int plc_comm_max_f64(plc_comm *c, double *vals, int n);
int plc_comm_barrier(plc_comm *c);
int plc_comm_send_bytes(plc_comm *c, const void *p, size_t bytes, int to, int tag);
int plc_comm_recv_bytes(plc_comm *c, void *p, size_t bytes, int from, int tag);
/* gathers n doubles from every rank into out[size * n] on rank 0 */
int plc_comm_gather_f64(plc_comm *c, const double *vals, int n, double *out);

/* the world rank of a plan coordinate set */
int plc_comm_world_rank(const plc_comm *c, plc_rank_coords co);

#endif
