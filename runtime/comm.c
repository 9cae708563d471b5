/* comm.c: MPI world, one communicator per plan group, non-blocking host
 * transfers. See comm.h. */
#include "runtime/comm.h"

#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "runtime/comm_bf16.h"

/* An allreduce of the plan is made once, as a persistent request (MPI 4,
 * or Open MPI's MPIX extension before it), and started at every step: MPI
 * allocates its temporary buffer (Open MPI's nonblocking allreduce takes
 * one of the message's size) once, in the dry communication step, instead
 * of at every call (tiny.plan's four gradient buckets are in flight
 * together anyway, so keeping their buffers adds nothing to the step's
 * peak). The other collectives stay nonblocking calls: kept as well, they
 * raised MPI's measured workspace on rank 0 of train_memory.sh's grown
 * layouts from 1.6 to 7.2 MiB (dp4) and from 0.6 to 11.2 MiB (tp2_zero).
 * Without persistent collectives, every start is a nonblocking call.
 * COLLECTIVE(Persistent, Nonblocking, keep, request, args...) */
#if MPI_VERSION < 4 && defined(OPEN_MPI)
#include <mpi-ext.h> /* Open MPI's extensions: MPIX_*_init */
#endif
#if MPI_VERSION >= 4
#define PLC_PERSISTENT 1
#define COLLECTIVE(pers, nb, keep, req, ...) \
    ((keep) ? MPI_##pers##_init(__VA_ARGS__, MPI_INFO_NULL, req) : MPI_##nb(__VA_ARGS__, req))
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PLC_PERSISTENT 1
#define COLLECTIVE(pers, nb, keep, req, ...) \
    ((keep) ? MPIX_##pers##_init(__VA_ARGS__, MPI_INFO_NULL, req) : MPI_##nb(__VA_ARGS__, req))
#else
#define PLC_PERSISTENT 0
#define COLLECTIVE(pers, nb, keep, req, ...) MPI_##nb(__VA_ARGS__, req)
#endif

/* A launcher leaves one of these in the environment of every rank. */
static int started_by_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE",
                                       "PMI_RANK", "SLURM_STEP_NUM_TASKS", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

int plc_comm_world_init(plc_comm *c, int argc_unused, char **argv_unused, char *err, size_t errlen)
{
    (void)argc_unused;
    (void)argv_unused;
    memset(c, 0, sizeof *c);
    c->rank = 0;
    c->size = 1;
    c->bf16_sum = c->bf16_max = MPI_OP_NULL;
    c->watch = MPI_COMM_NULL;
    c->watch_instr = -1;
    if (!started_by_launcher() && !getenv("PLC_FORCE_MPI")) return 0;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return plc_fail(err, errlen, "cannot initialise MPI");
    c->use_mpi = 1;
    if (plc_bf16_mpi_ops_create(&c->bf16_sum, &c->bf16_max))
        return plc_fail(err, errlen, "cannot create the MPI operations for bf16 reductions");
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    return 0;
}

int plc_comm_world_rank(const plc_comm *c, plc_rank_coords co)
{
    return (int)plc_coords_to_rank(&c->layout, co);
}

int plc_comm_setup(plc_comm *c, const plc_plan *plan, char *err, size_t errlen)
{
    if (plan->world_size != c->size)
        return plc_fail(err, errlen,
                        "the plan is for %lld rank%s (dp=%lld tp=%lld pp=%lld cp=%lld) but %d %s "
                        "started; run it with `mpirun -np %lld plrun PLAN` (or srun -n %lld)",
                        (long long)plan->world_size, plan->world_size == 1 ? "" : "s", (long long)plan->layout.dp,
                        (long long)plan->layout.tp, (long long)plan->layout.pp,
                        (long long)plan->layout.cp, c->size, c->size == 1 ? "rank was" : "ranks were",
                        (long long)plan->world_size, (long long)plan->world_size);
    c->layout = plan->layout;
    c->plan = plan;
    c->coords = plc_rank_to_coords(&plan->layout, c->rank);
    if (c->use_mpi && MPI_Comm_dup(MPI_COMM_WORLD, &c->watch) != MPI_SUCCESS)
        return plc_fail(err, errlen, "MPI_Comm_dup failed (the watchdog's communicator)");
    c->ngroups = plan->ngroups;
    c->groups = calloc(plan->ngroups ? plan->ngroups : 1, sizeof *c->groups);
    if (!c->groups) return plc_fail(err, errlen, "out of memory");
    for (uint32_t i = 0; i < plan->ngroups; i++) {
        plc_comm_group *cg = &c->groups[i];
        const plc_group_seat seat = plc_group_seat_of(&c->layout, &plan->groups[i], c->coords);
        const int colour = (int)seat.colour;
        cg->member = seat.member;
        cg->rank = (int)seat.index;
        cg->size = (int)seat.size;
        cg->mpi = MPI_COMM_NULL;
        if (!cg->member) { cg->rank = 0; cg->size = 1; }
        if (!c->use_mpi) continue;
        /* collective over the world: every rank calls split for every group */
        if (MPI_Comm_split(MPI_COMM_WORLD, cg->member ? colour : MPI_UNDEFINED, c->rank,
                           &cg->mpi) != MPI_SUCCESS)
            return plc_fail(err, errlen, "MPI_Comm_split failed for group %u (%s)", i,
                            plan->groups[i].name ? plan->groups[i].name : "?");
        if (cg->member) {
            int r, s;
            MPI_Comm_rank(cg->mpi, &r);
            MPI_Comm_size(cg->mpi, &s);
            if (r != cg->rank || s != cg->size)
                return plc_fail(err, errlen, "group %u (%s): MPI gave rank %d of %d, expected %d of %d",
                                i, plan->groups[i].name ? plan->groups[i].name : "?", r, s, cg->rank,
                                cg->size);
        }
    }
    return 0;
}

void plc_comm_finalize(plc_comm *c)
{
    for (int i = 0; c->persist && c->use_mpi && i < c->nslots; i++)
        if (c->persist[i] != MPI_REQUEST_NULL) MPI_Request_free(&c->persist[i]);
    free(c->persist);
    free(c->persist_call);
    c->persist = NULL;
    c->persist_call = NULL;
    if (c->groups && c->use_mpi)
        for (uint32_t i = 0; i < c->ngroups; i++)
            if (c->groups[i].mpi != MPI_COMM_NULL) MPI_Comm_free(&c->groups[i].mpi);
    if (c->use_mpi && c->watch != MPI_COMM_NULL) MPI_Comm_free(&c->watch);
    free(c->groups);
    free(c->slots);
    free(c->slot_peer);
    free(c->slot_group);
    c->groups = NULL;
    c->slots = NULL;
    c->slot_peer = c->slot_group = NULL;
    if (c->use_mpi) {
        plc_bf16_mpi_ops_free(&c->bf16_sum, &c->bf16_max);
        MPI_Finalize();
    }
    c->use_mpi = 0;
}

void plc_comm_abort(plc_comm *c, int code)
{
    fflush(stdout);
    fflush(stderr);
    if (c && c->use_mpi) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

int plc_keys_first_pair(const char *keys, int n, int *i, int *j)
{
    for (int b = 1; b < n; b++)
        for (int a = 0; a < b; a++) {
            const char *ka = keys + (size_t)a * PLC_NODE_KEY, *kb = keys + (size_t)b * PLC_NODE_KEY;
            if (ka[0] && !strncmp(ka, kb, PLC_NODE_KEY)) {
                *i = a, *j = b;
                return 1;
            }
        }
    return 0;
}

/* the ranks that share this rank's memory, in world rank order; false
 * without MPI or when MPI cannot split them off */
static bool node_comm(const plc_comm *c, MPI_Comm *node)
{
    if (!c->use_mpi || c->size == 1) return false;
    return MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, node) == MPI_SUCCESS;
}

int plc_comm_node(const plc_comm *c, int *index)
{
    MPI_Comm node;
    int n = 1;
    *index = 0;
    if (!node_comm(c, &node)) return 1;
    MPI_Comm_size(node, &n);
    MPI_Comm_rank(node, index);
    MPI_Comm_free(&node);
    return n;
}

int plc_comm_node_shared(const plc_comm *c, const char *key, int *a, int *b)
{
    MPI_Comm node;
    if (!node_comm(c, &node)) return 0;
    int n = 1, rc = 0;
    MPI_Comm_size(node, &n);
    char *keys = malloc((size_t)n * PLC_NODE_KEY);
    int *worlds = malloc(sizeof *worlds * (size_t)n);
    /* every rank of the node takes part, also one that cannot allocate, so that none waits */
    char mine[PLC_NODE_KEY] = {0};
    snprintf(mine, sizeof mine, "%s", key);
    int ok = keys && worlds, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
    if (all_ok && MPI_Allgather(mine, PLC_NODE_KEY, MPI_CHAR, keys, PLC_NODE_KEY, MPI_CHAR, node) == MPI_SUCCESS &&
        MPI_Allgather(&c->rank, 1, MPI_INT, worlds, 1, MPI_INT, node) == MPI_SUCCESS) {
        int i, j; /* the first pair, the same on every rank of the node */
        if (plc_keys_first_pair(keys, n, &i, &j)) rc = 1, *a = worlds[i], *b = worlds[j];
    } else {
        rc = -1;
    }
    free(keys);
    free(worlds);
    MPI_Comm_free(&node);
    return rc;
}

int plc_comm_group_size(const plc_comm *c, int group)
{
    if (group < 0 || (uint32_t)group >= c->ngroups) return 1;
    return c->groups[group].size;
}

static MPI_Datatype mpi_type(plc_dtype t)
{
    switch (t) {
    case PLC_F32: return MPI_FLOAT;
    case PLC_F64: return MPI_DOUBLE;
    case PLC_I32: return MPI_INT32_T;
    case PLC_BF16: return MPI_UINT16_T;
    default: return MPI_DATATYPE_NULL;
    }
}

static int ensure_slot(plc_comm *c, int slot)
{
    if (slot < c->nslots) return 0;
    int n = c->nslots ? c->nslots : 64;
    while (n <= slot) n *= 2;
    /* each per-slot array to n elements (those grown stay valid on failure) */
#define GROW(field)                                                     \
    do {                                                                \
        void *grown = realloc(c->field, (size_t)n * sizeof *c->field); \
        if (!grown) return -1;                                          \
        c->field = grown;                                               \
    } while (0)
    GROW(slots);
    GROW(slot_peer);
    GROW(slot_group);
    GROW(persist);
    GROW(persist_call);
#undef GROW
    for (int i = c->nslots; i < n; i++) {
        c->slots[i] = MPI_REQUEST_NULL;
        c->slot_peer[i] = -1;
        c->slot_group[i] = -1;
        c->persist[i] = MPI_REQUEST_NULL;
    }
    c->nslots = n;
    return 0;
}

/* One member: the collective is a local copy (or nothing). */
static int local_collective(const plc_comm_call *call)
{
    size_t bytes = (size_t)call->count * plc_dtype_size(call->dtype);
    if ((call->op == PLC_OP_REDUCE_SCATTER || call->op == PLC_OP_ALLGATHER) && call->dst != call->src)
        memmove(call->dst, call->src, bytes);
    return 0;
}

#if PLC_PERSISTENT
/* the same collective as the one the slot's persistent request was made for */
static int same_call(const plc_comm_call *a, const plc_comm_call *b)
{
    return a->op == b->op && a->group == b->group && a->dst == b->dst && a->src == b->src && a->count == b->count &&
           a->dtype == b->dtype && a->reduce_max == b->reduce_max && a->root == b->root;
}

static int start_persistent(plc_comm *c, int slot, char *err, size_t errlen)
{
    if (MPI_Start(&c->persist[slot]) != MPI_SUCCESS) return plc_fail(err, errlen, "MPI_Start failed");
    c->slots[slot] = c->persist[slot]; /* pending; the wait leaves c->persist[slot] for the next start */
    return 0;
}
#endif

int plc_comm_start(plc_comm *c, const plc_comm_call *call, int slot, char *err, size_t errlen)
{
    if (slot < 0 || ensure_slot(c, slot) != 0) return plc_fail(err, errlen, "bad request slot %d", slot);
    if (c->slots[slot] != MPI_REQUEST_NULL)
        return plc_fail(err, errlen, "request %d started twice without a wait", slot);
    if (call->count < 0 || call->count > INT_MAX)
        return plc_fail(err, errlen, "count %lld out of MPI's range", (long long)call->count);
    int count = (int)call->count;
    MPI_Datatype type = mpi_type(call->dtype);
    if (type == MPI_DATATYPE_NULL) return plc_fail(err, errlen, "no MPI type for this dtype");
    MPI_Request *req = &c->slots[slot];
    c->slot_peer[slot] = plc_op_comm(call->op) == PLC_COMM_PEER ? call->peer : -1;
    c->slot_group[slot] = call->group;

    if (plc_op_comm(call->op) == PLC_COMM_PEER) {
        if (!c->use_mpi || call->peer < 0 || call->peer >= c->size || call->peer == c->rank)
            return plc_fail(err, errlen, "%s to/from rank %d: no such peer in a world of %d",
                            plc_op_name(call->op), call->peer, c->size);
        int rc = call->op == PLC_OP_SEND
                     ? MPI_Isend(call->dst, count, type, call->peer, call->tag, MPI_COMM_WORLD, req)
                     : MPI_Irecv(call->dst, count, type, call->peer, call->tag, MPI_COMM_WORLD, req);
        return rc == MPI_SUCCESS ? 0 : plc_fail(err, errlen, "MPI %s failed", plc_op_name(call->op));
    }

    if (call->group < 0 || (uint32_t)call->group >= c->ngroups)
        return plc_fail(err, errlen, "group %d does not exist", call->group);
    const plc_comm_group *g = &c->groups[call->group];
    if (!g->member) return plc_fail(err, errlen, "this rank is not a member of group %d", call->group);
    if (g->size == 1 || g->mpi == MPI_COMM_NULL) return local_collective(call);
    const int keep = PLC_PERSISTENT && call->op == PLC_OP_ALLREDUCE;
    MPI_Request *made = keep ? &c->persist[slot] : req;
#if PLC_PERSISTENT
    if (keep && *made != MPI_REQUEST_NULL && same_call(&c->persist_call[slot], call))
        return start_persistent(c, slot, err, errlen);
    if (keep && *made != MPI_REQUEST_NULL) MPI_Request_free(made);
#endif

    size_t esz = plc_dtype_size(call->dtype);
    /* bf16 reduces with its own operations (comm_bf16.h) */
    const int bf16 = call->dtype == PLC_BF16;
    MPI_Op sum = bf16 ? c->bf16_sum : MPI_SUM, max = bf16 ? c->bf16_max : MPI_MAX;
    int rc = MPI_SUCCESS;
    switch (call->op) {
    case PLC_OP_ALLREDUCE:
        rc = COLLECTIVE(Allreduce, Iallreduce, keep, made, MPI_IN_PLACE, call->dst, count, type,
                        call->reduce_max ? max : sum, g->mpi);
        break;
    case PLC_OP_REDUCE_SCATTER:
        rc = MPI_Ireduce_scatter_block(call->src, call->dst, count, type, sum, g->mpi, req);
        break;
    case PLC_OP_ALLGATHER: {
        const char *own = (const char *)call->dst + (size_t)g->rank * (size_t)count * esz;
        const void *send = own == call->src ? MPI_IN_PLACE : call->src;
        rc = MPI_Iallgather(send, count, type, call->dst, count, type, g->mpi, req);
        break;
    }
    case PLC_OP_BROADCAST:
        if (call->root < 0 || call->root >= g->size)
            return plc_fail(err, errlen, "broadcast root %d outside a group of %d", call->root, g->size);
        rc = MPI_Ibcast(call->dst, count, type, call->root, g->mpi, req);
        break;
    default:
        return plc_fail(err, errlen, "%s is not a communication op", plc_op_name(call->op));
    }
    if (rc != MPI_SUCCESS) {
        *made = MPI_REQUEST_NULL;
        return plc_fail(err, errlen, "MPI %s failed", plc_op_name(call->op));
    }
#if PLC_PERSISTENT
    if (keep) {
        c->persist_call[slot] = *call;
        return start_persistent(c, slot, err, errlen);
    }
#endif
    return 0;
}


/* ---- the watchdog (comm.h) ------------------------------------------------- */

enum { WATCH_PING = 1, WATCH_PONG = 2 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* answers every pending question of a peer with (step, instruction) */
static void answer_questions(plc_comm *c)
{
    if (c->watch == MPI_COMM_NULL) return;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, WATCH_PING, c->watch, &flag, &st) != MPI_SUCCESS || !flag) return;
        int64_t q, a[2] = {c->watch_step, c->watch_instr};
        MPI_Recv(&q, 1, MPI_INT64_T, st.MPI_SOURCE, WATCH_PING, c->watch, MPI_STATUS_IGNORE);
        MPI_Send(a, 2, MPI_INT64_T, st.MPI_SOURCE, WATCH_PONG, c->watch); /* small: sent eagerly */
    }
}

/* the world ranks of this rank's communicator of plan group g, but itself */
static int group_peers(const plc_comm *c, int g, int *out)
{
    int n = 0;
    if (!c->plan || g < 0 || (uint32_t)g >= c->plan->ngroups) return 0;
    const plc_group *gr = &c->plan->groups[g];
    const int64_t mine = plc_group_seat_of(&c->layout, gr, c->coords).colour;
    for (int r = 0; r < c->size; r++) {
        const plc_group_seat s = plc_group_seat_of(&c->layout, gr, plc_rank_to_coords(&c->layout, r));
        if (s.member && s.colour == mine && r != c->rank) out[n++] = r;
    }
    return n;
}

static size_t list_ranks(char *out, size_t n, const int *r, int count)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < count && used < n; i++) {
        if (i == 8 && count > 9) {
            used += (size_t)snprintf(out + used, n - used, " and %d more", count - 8);
            break;
        }
        used += (size_t)snprintf(out + used, n - used, "%s%d", i ? ", " : "", r[i]);
    }
    return used;
}

/* the deadline passed: asks the peers, then describes who does not answer
 * (-1); 1 when every peer answers and waiting on is right (watch_io) */
static int diagnose(plc_comm *c, const int *peers, int n, const char *what, double waited, char *err,
                    size_t errlen)
{
    static const int64_t question = 0; /* outlives the sends */
    int *answered = calloc((size_t)(n > 0 ? n : 1), sizeof *answered);
    int *silent = calloc((size_t)(n > 0 ? n : 1), sizeof *silent);
    int64_t (*where)[2] = calloc((size_t)(n > 0 ? n : 1), sizeof *where);
    c->timed_out = 1;
    if (!answered || !silent || !where) {
        free(answered);
        free(silent);
        free(where);
        return plc_fail(err, errlen, "no progress for %.1f s (the --timeout deadline) waiting for %s", waited,
                        what);
    }
    for (int i = 0; i < n; i++) {
        MPI_Request rq;
        if (MPI_Isend(&question, 1, MPI_INT64_T, peers[i], WATCH_PING, c->watch, &rq) == MPI_SUCCESS)
            MPI_Request_free(&rq);
    }
    int nans = 0;
    for (double t0 = now_s(); nans < n && now_s() - t0 < PLC_WATCH_GRACE_S;) {
        answer_questions(c);
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, WATCH_PONG, c->watch, &flag, &st) == MPI_SUCCESS && flag) {
            int64_t a[2];
            MPI_Recv(a, 2, MPI_INT64_T, st.MPI_SOURCE, WATCH_PONG, c->watch, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++)
                if (peers[i] == st.MPI_SOURCE && !answered[i]) {
                    answered[i] = 1;
                    where[i][0] = a[0];
                    where[i][1] = a[1];
                    nans++;
                }
            continue;
        }
        nap(1000000);
    }
    int nsilent = 0;
    for (int i = 0; i < n; i++)
        if (!answered[i]) silent[nsilent++] = peers[i];
    char list[160];
    if (nsilent > 0) {
        list_ranks(list, sizeof list, silent, nsilent);
        plc_fail(err, errlen,
                 "no progress for %.1f s (the --timeout deadline) waiting for %s; rank%s %s did not answer "
                 "within %.0f s (stopped, hung or dead)",
                 waited, what, nsilent > 1 ? "s" : "", list, PLC_WATCH_GRACE_S);
    } else if (c->watch_io) {
        /* every peer is alive and waiting: a long gather, not a hang */
        free(answered);
        free(silent);
        free(where);
        c->timed_out = 0;
        return 1;
    } else {
        char at[64] = "";
        if (n > 0) {
            if (where[0][1] >= 0)
                snprintf(at, sizeof at, " (rank %d waits at step %lld, instruction %lld)", peers[0],
                         (long long)where[0][0], (long long)where[0][1]);
            else
                snprintf(at, sizeof at, " (rank %d is %s)", peers[0],
                         where[0][1] == -2 ? "in the step's reductions" : "outside a step");
        }
        plc_fail(err, errlen,
                 "no progress for %.1f s (the --timeout deadline) waiting for %s, although every peer answers%s: "
                 "the ranks wait for each other",
                 waited, what, at);
    }
    free(answered);
    free(silent);
    free(where);
    return -1;
}

/* completes req within the deadline; peers[0..n) are the ranks it needs */
static int timed_wait(plc_comm *c, MPI_Request *req, const int *peers, int n, const char *what, char *err,
                      size_t errlen)
{
    if (c->deadline_s <= 0 || c->watch == MPI_COMM_NULL)
        return MPI_Wait(req, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : plc_fail(err, errlen, "MPI_Wait failed");
    double t0 = now_s();
    const double deadline = c->deadline_s + (c->watch_io ? c->watch_io_extra_s : 0.0);
    for (long spins = 0;; spins++) {
        int done = 0;
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return plc_fail(err, errlen, "MPI_Test failed");
        if (done) return 0;
        if (spins % 64 == 63) answer_questions(c);
        if (spins < 2000) continue; /* a short wait stays a spin */
        double waited = now_s() - t0;
        if (waited > deadline) {
            int rc = diagnose(c, peers, n, what, waited, err, errlen);
            if (rc < 0) return rc;
            t0 = now_s(); /* alive and waiting: wait on */
        }
        nap(50000);
    }
}

static int wait_slot(plc_comm *c, int slot, char *err, size_t errlen)
{
    char what[160];
    int *peers = calloc((size_t)c->size, sizeof *peers);
    if (!peers) return plc_fail(err, errlen, "out of memory");
    int n = 0;
    if (c->slot_peer[slot] >= 0) {
        peers[n++] = c->slot_peer[slot];
        snprintf(what, sizeof what, "pipeline peer rank %d", c->slot_peer[slot]);
    } else {
        int g = c->slot_group[slot];
        n = group_peers(c, g, peers);
        char list[120];
        list_ranks(list, sizeof list, peers, n);
        snprintf(what, sizeof what, "group %s (with rank%s %s)",
                 c->plan && g >= 0 && c->plan->groups[g].name ? c->plan->groups[g].name : "?", n > 1 ? "s" : "",
                 list);
    }
    int rc = timed_wait(c, &c->slots[slot], peers, n, what, err, errlen);
    free(peers);
    return rc;
}

/* a world reduction, under the watchdog during a step */
static int world_allreduce(plc_comm *c, double *vals, int n, MPI_Op op)
{
    if (c->deadline_s <= 0 || (c->watch_instr == -1 && !c->watch_io)) {
        if (MPI_Allreduce(MPI_IN_PLACE, vals, n, MPI_DOUBLE, op, MPI_COMM_WORLD) == MPI_SUCCESS) return 0;
        return plc_fail(c->error, sizeof c->error, "MPI_Allreduce failed");
    }
    MPI_Request req;
    if (MPI_Iallreduce(MPI_IN_PLACE, vals, n, MPI_DOUBLE, op, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        return plc_fail(c->error, sizeof c->error, "MPI_Iallreduce failed");
    int *peers = calloc((size_t)c->size, sizeof *peers);
    if (!peers) return plc_fail(c->error, sizeof c->error, "out of memory");
    int np = 0;
    for (int r = 0; r < c->size; r++)
        if (r != c->rank) peers[np++] = r;
    int rc = timed_wait(c, &req, peers, np,
                        c->watch_io ? "every rank (a checkpoint's agreement)" : "every rank (the step's reductions)",
                        c->error, sizeof c->error);
    free(peers);
    return rc;
}

int plc_comm_wait(plc_comm *c, int slot, char *err, size_t errlen)
{
    if (slot < 0 || slot >= c->nslots || c->slots[slot] == MPI_REQUEST_NULL) return 0;
    int rc = wait_slot(c, slot, err, errlen);
    if (rc == 0) c->slots[slot] = MPI_REQUEST_NULL; /* a persistent request stays in c->persist */
    return rc;
}

int plc_comm_sum_f64(plc_comm *c, double *vals, int n)
{
    if (!c->use_mpi || c->size == 1) return 0;
    return world_allreduce(c, vals, n, MPI_SUM);
}

int plc_comm_max_f64(plc_comm *c, double *vals, int n)
{
    if (!c->use_mpi || c->size == 1) return 0;
    return world_allreduce(c, vals, n, MPI_MAX);
}

int plc_comm_barrier(plc_comm *c)
{
    if (!c->use_mpi) return 0;
    return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

/* Large transfers go in pieces below INT_MAX bytes. */
#define PLC_COMM_CHUNK ((size_t)1 << 30)

/* one piece of a point-to-point transfer, under the watchdog with watch_io */
static int p2p(plc_comm *c, int send, void *p, size_t n, int peer, int tag)
{
    if (c->deadline_s <= 0 || !c->watch_io || c->watch == MPI_COMM_NULL) {
        int rc = send ? MPI_Send(p, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD)
                      : MPI_Recv(p, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return rc == MPI_SUCCESS ? 0 : plc_fail(c->error, sizeof c->error, "MPI_%s failed", send ? "Send" : "Recv");
    }
    MPI_Request req;
    int rc = send ? MPI_Isend(p, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req)
                  : MPI_Irecv(p, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) return plc_fail(c->error, sizeof c->error, "MPI_I%s failed", send ? "send" : "recv");
    char what[64];
    snprintf(what, sizeof what, "rank %d (a checkpoint's gather)", peer);
    return timed_wait(c, &req, &peer, 1, what, c->error, sizeof c->error);
}

int plc_comm_send_bytes(plc_comm *c, const void *p, size_t bytes, int to, int tag)
{
    if (!c->use_mpi) return -1;
    for (size_t off = 0; off < bytes || (bytes == 0 && off == 0); off += PLC_COMM_CHUNK) {
        size_t n = bytes - off < PLC_COMM_CHUNK ? bytes - off : PLC_COMM_CHUNK;
        if (p2p(c, 1, (char *)(uintptr_t)p + off, n, to, tag)) return -1;
        if (bytes == 0) break;
    }
    return 0;
}

int plc_comm_recv_bytes(plc_comm *c, void *p, size_t bytes, int from, int tag)
{
    if (!c->use_mpi) return -1;
    for (size_t off = 0; off < bytes || (bytes == 0 && off == 0); off += PLC_COMM_CHUNK) {
        size_t n = bytes - off < PLC_COMM_CHUNK ? bytes - off : PLC_COMM_CHUNK;
        if (p2p(c, 0, (char *)p + off, n, from, tag)) return -1;
        if (bytes == 0) break;
    }
    return 0;
}

int plc_comm_gather_f64(plc_comm *c, const double *vals, int n, double *out)
{
    if (!c->use_mpi || c->size == 1) {
        memcpy(out, vals, (size_t)n * sizeof *vals);
        return 0;
    }
    return MPI_Gather(vals, n, MPI_DOUBLE, out, n, MPI_DOUBLE, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}
