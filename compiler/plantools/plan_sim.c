/* plan_sim.c: the simulation engine (see plantools.h). Ranks advance until
 * they block; a match (message or collective) computes the completion time
 * from the parties' arrival times and puts the parties back on the work
 * list. No global clock is needed: every time is computed from the times it
 * depends on, which are known by the time the match happens. */
#include "compiler/plantools/plantools_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/plan_io.h"
#include "plc/arena.h"

typedef struct party {
    int32_t sim;
    uint32_t instr;
    double arrival;
} party;

/* a FIFO of parties, for one direction of a channel */
typedef struct queue {
    party *v;
    size_t head, n, cap;
} queue;

typedef struct call {
    int64_t seq;
    int32_t narrived;
    double tmax;
    party first;  /* for signature checks and messages */
    party *parties;
} call;

typedef struct instance {
    int32_t members; /* simulated members */
    call *calls;     /* open calls, in seq order */
    size_t ncalls, cap;
} instance;

typedef struct simrank {
    int64_t world;
    plc_rank_coords co;
    const plc_program *prog;
    int64_t stage;
    uint32_t pc;
    int32_t posted_pc; /* compute-stream comm op posted and not yet matched */
    double t_host, comm_free;
    double *done;      /* completion time per instruction, NAN until then */
    bool queued;
} simrank;

typedef struct sim {
    const plc_plan *p;
    const plc_sim_opts *o;
    int32_t n;
    simrank *r;
    int64_t pp;
    queue *sendq, *recvq; /* [n * pp]: channel (sim, destination stage) */
    int32_t *inst_of;     /* [ngroups * n] instance of each sim rank per group, -1 not a member */
    int64_t *seq;         /* [ngroups * n] */
    instance *inst;
    int32_t ninst;
    int32_t *work;
    int32_t nwork;
    char *err;
    size_t errlen;
    int failed;
    plc_status status; /* of the failure: internal unless set otherwise */
    int64_t executed;
} sim;

static int sfail(sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sfail(sim *s, const char *fmt, ...)
{
    if (s->failed) return -1;
    s->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, s->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *opname(const plc_instr *in)
{
    const char *n = plc_op_name(in->op);
    return n ? n : "?";
}

static bool is_p2p(plc_op op) { return plc_op_comm(op) == PLC_COMM_PEER; }
static bool is_coll(plc_op op) { return plc_op_comm(op) == PLC_COMM_GROUP; }

static double cost_of(sim *s, const simrank *r, const plc_instr *in)
{
    if (!s->o->cost) return 0.0;
    double c = s->o->cost(s->o->cost_ctx, s->p, r->prog, in);
    return c > 0 ? c : 0.0;
}

static void event(sim *s, const simrank *r, uint32_t i, double start, double end)
{
    if (s->o->event) s->o->event(s->o->event_ctx, r->world, r->stage, i, &r->prog->instrs[i], start, end);
}

static void push_work(sim *s, int32_t k)
{
    if (s->r[k].queued) return;
    s->r[k].queued = true;
    s->work[s->nwork++] = k;
}

static void q_push(queue *q, party x)
{
    if (q->head + q->n == q->cap) {
        if (q->head > 0) {
            memmove(q->v, q->v + q->head, sizeof *q->v * q->n);
            q->head = 0;
        } else {
            size_t cap = q->cap ? q->cap * 2 : 8;
            party *v = realloc(q->v, sizeof *v * cap);
            if (!v) plc_oom_raise(sizeof *v * cap);
            q->v = v;
            q->cap = cap;
        }
    }
    q->v[q->head + q->n++] = x;
}

static party q_pop(queue *q)
{
    party x = q->v[q->head++];
    q->n--;
    if (!q->n) q->head = 0;
    return x;
}

/* completes an instruction of a party at `end` */
static void finish(sim *s, party pa, double start, double end)
{
    simrank *r = &s->r[pa.sim];
    r->done[pa.instr] = end;
    const plc_instr *in = &r->prog->instrs[pa.instr];
    if (in->stream == PLC_STREAM_COMM && is_coll(in->op) && end > r->comm_free) r->comm_free = end;
    event(s, r, pa.instr, start, end);
    s->executed++;
    push_work(s, pa.sim);
}

static double ready(const sim *s, party pa)
{
    const simrank *r = &s->r[pa.sim];
    double t = pa.arrival;
    /* collectives on the comm stream run one at a time; messages travel on
     * their own (point-to-point transfers per peer, as NCCL groups them) */
    const plc_instr *in = &r->prog->instrs[pa.instr];
    if (in->stream == PLC_STREAM_COMM && is_coll(in->op) && r->comm_free > t) t = r->comm_free;
    return t;
}

static int try_match_channel(sim *s, int32_t ch)
{
    queue *sq = &s->sendq[ch], *rq = &s->recvq[ch];
    while (sq->n && rq->n) {
        party a = q_pop(sq), b = q_pop(rq);
        const plc_instr *ia = &s->r[a.sim].prog->instrs[a.instr], *ib = &s->r[b.sim].prog->instrs[b.instr];
        if (ia->arg[0] != ib->arg[0])
            return sfail(s, "rank %lld instruction %u (SEND of %lld elements to stage %d) meets rank %lld instruction %u "
                         "(RECV of %lld elements)", (long long)s->r[a.sim].world, a.instr, (long long)ia->arg[0],
                         ia->peer, (long long)s->r[b.sim].world, b.instr, (long long)ib->arg[0]);
        double start = fmax(ready(s, a), ready(s, b));
        double end = start + cost_of(s, &s->r[a.sim], ia);
        finish(s, a, start, end);
        finish(s, b, start, end);
    }
    return 0;
}

/* sim index of the rank at the same tp/cp/dp coordinates on stage q */
static int32_t sim_at_stage(const sim *s, const simrank *r, int64_t q)
{
    if (!s->o->all_ranks) return (int32_t)q;
    plc_rank_coords c = r->co;
    c.pp = q;
    return (int32_t)plc_coords_to_rank(&s->p->layout, c);
}

static int post_p2p(sim *s, int32_t k, uint32_t i, double t)
{
    simrank *r = &s->r[k];
    const plc_instr *in = &r->prog->instrs[i];
    if (in->peer == r->co.pp)
        return sfail(s, "rank %lld instruction %u: %s with its own stage", (long long)r->world, i, opname(in));
    party pa = {k, i, t};
    int32_t ch;
    queue *q;
    if (in->op == PLC_OP_SEND) {
        ch = k * (int32_t)s->pp + in->peer;
        q = &s->sendq[ch];
    } else {
        ch = sim_at_stage(s, r, in->peer) * (int32_t)s->pp + (int32_t)r->co.pp;
        q = &s->recvq[ch];
    }
    q_push(q, pa);
    return try_match_channel(s, ch);
}

static int post_coll(sim *s, int32_t k, uint32_t i, double t)
{
    simrank *r = &s->r[k];
    const plc_instr *in = &r->prog->instrs[i];
    const plc_group *g = &s->p->groups[in->group];
    int32_t id = s->inst_of[(size_t)in->group * (size_t)s->n + (size_t)k];
    if (id < 0)
        return sfail(s, "rank %lld instruction %u: %s on group '%s', of which the rank is not a member",
                     (long long)r->world, i, opname(in), g->name ? g->name : "?");
    instance *I = &s->inst[id];
    int64_t seq = s->seq[(size_t)in->group * (size_t)s->n + (size_t)k]++;
    party pa = {k, i, t};
    /* find or open the call */
    size_t ci = 0;
    while (ci < I->ncalls && I->calls[ci].seq != seq) ci++;
    if (ci == I->ncalls) {
        if (I->ncalls == I->cap) {
            size_t cap = I->cap ? I->cap * 2 : 4;
            call *v = realloc(I->calls, sizeof *v * cap);
            if (!v) plc_oom_raise(sizeof *v * cap);
            I->calls = v;
            I->cap = cap;
        }
        call *c = &I->calls[I->ncalls++];
        memset(c, 0, sizeof *c);
        c->seq = seq;
        c->first = pa;
        c->tmax = -INFINITY;
        c->parties = malloc(sizeof *c->parties * (size_t)I->members);
        if (!c->parties) plc_oom_raise(sizeof *c->parties * (size_t)I->members);
    }
    call *c = &I->calls[ci];
    const plc_instr *f = &s->r[c->first.sim].prog->instrs[c->first.instr];
    if (f->op != in->op || f->arg[0] != in->arg[0] || f->arg[1] != in->arg[1])
        return sfail(s, "collective #%lld on group '%s': rank %lld instruction %u enters %s of %lld elements, rank %lld "
                     "instruction %u enters %s of %lld", (long long)seq, g->name ? g->name : "?",
                     (long long)s->r[c->first.sim].world, c->first.instr, opname(f), (long long)f->arg[0],
                     (long long)r->world, i, opname(in), (long long)in->arg[0]);
    c->parties[c->narrived++] = pa;
    double rt = ready(s, pa);
    if (rt > c->tmax) c->tmax = rt;
    if (c->narrived < I->members) return 0;
    double end = c->tmax + cost_of(s, &s->r[c->first.sim], f);
    for (int32_t m = 0; m < c->narrived; m++) finish(s, c->parties[m], c->tmax, end);
    free(c->parties);
    memmove(&I->calls[ci], &I->calls[ci + 1], sizeof *I->calls * (I->ncalls - ci - 1));
    I->ncalls--;
    return 0;
}

/* runs rank k until it blocks or ends */
static int advance(sim *s, int32_t k)
{
    simrank *r = &s->r[k];
    const plc_program *g = r->prog;
    while (r->pc < g->ninstrs && !s->failed) {
        uint32_t i = r->pc;
        const plc_instr *in = &g->instrs[i];
        if (r->posted_pc == (int32_t)i) { /* blocked on a compute-stream comm op */
            if (isnan(r->done[i])) return 0;
            r->t_host = r->done[i];
            r->posted_pc = -1;
            r->pc++;
            continue;
        }
        double t0 = r->t_host;
        if (in->wait >= 0) {
            double w = r->done[in->wait];
            if (isnan(w)) return 0;
            if (w > t0) t0 = w;
        }
        if (in->op == PLC_OP_WAIT) {
            r->t_host = t0;
            r->done[i] = t0;
            r->pc++;
            continue;
        }
        if (is_p2p(in->op) || is_coll(in->op)) {
            int32_t id = is_coll(in->op) ? s->inst_of[(size_t)in->group * (size_t)s->n + (size_t)k] : -1;
            int rc;
            if (id >= 0 && s->inst[id].members == 1) {
                /* the other members are this rank's lock-step twins */
                s->seq[(size_t)in->group * (size_t)s->n + (size_t)k]++;
                party pa = {k, i, t0};
                double st = ready(s, pa);
                finish(s, pa, st, st + cost_of(s, r, in));
                rc = 0;
            } else {
                rc = is_p2p(in->op) ? post_p2p(s, k, i, t0) : post_coll(s, k, i, t0);
            }
            if (rc) return -1;
            if (in->stream == PLC_STREAM_COMM) {
                r->pc++;
                continue;
            }
            r->posted_pc = (int32_t)i;
            continue; /* re-examined at the top: matched already or blocked */
        }
        double end = t0 + cost_of(s, r, in);
        r->done[i] = end;
        event(s, r, i, t0, end);
        s->executed++;
        r->t_host = end;
        r->pc++;
    }
    return s->failed ? -1 : 0;
}

static int setup_groups(sim *s)
{
    const plc_plan *p = s->p;
    const plc_layout *l = &p->layout;
    size_t ng = p->ngroups, n = (size_t)s->n;
    s->inst_of = malloc(sizeof *s->inst_of * (ng * n + 1));
    s->seq = calloc(ng * n + 1, sizeof *s->seq);
    int64_t *key = malloc(sizeof *key * (n + 1));
    s->inst = calloc(ng * n + 1, sizeof *s->inst);
    if (!s->inst_of || !s->seq || !key || !s->inst) {
        free(key);
        plc_oom_raise((ng * n + 1) * (sizeof *s->inst_of + sizeof *s->seq + sizeof *s->inst) + sizeof *key * (n + 1));
    }
    s->ninst = 0;
    for (size_t gi = 0; gi < ng; gi++) {
        const plc_group *g = &p->groups[gi];
        /* colour: the rank with the group's varying coordinates zeroed */
        for (size_t k = 0; k < n; k++) {
            const plc_group_seat seat = plc_group_seat_of(l, g, s->r[k].co);
            key[k] = seat.member ? seat.colour : -1;
        }
        /* dense instance ids in order of first appearance (n is at most 64
         * ranks, or one rank per stage) */
        for (size_t k = 0; k < n; k++) {
            if (key[k] < 0) {
                s->inst_of[gi * n + k] = -1;
                continue;
            }
            int32_t found = -1;
            for (size_t j = 0; j < k; j++)
                if (key[j] == key[k]) {
                    found = s->inst_of[gi * n + j];
                    break;
                }
            if (found < 0) found = s->ninst++;
            s->inst_of[gi * n + k] = found;
            s->inst[found].members++;
        }
    }
    free(key);
    return 0;
}

plc_status plc_sim_run(const plc_plan *p, const plc_sim_opts *o, plc_sim_result *res, char *err, size_t errlen)
{
    sim S;
    memset(&S, 0, sizeof S);
    sim *s = &S;
    s->p = p;
    s->o = o;
    s->err = err;
    s->errlen = errlen;
    s->pp = p->layout.pp;
    s->n = (int32_t)(o->all_ranks ? p->world_size : p->layout.pp);
    memset(res, 0, sizeof *res);
    s->r = calloc((size_t)s->n, sizeof *s->r);
    s->sendq = calloc((size_t)(s->n * s->pp), sizeof *s->sendq);
    s->recvq = calloc((size_t)(s->n * s->pp), sizeof *s->recvq);
    s->work = malloc(sizeof *s->work * (size_t)s->n);
    int rc = 0;
    if (!s->r || !s->sendq || !s->recvq || !s->work)
        plc_oom_raise((size_t)s->n * (sizeof *s->r + sizeof *s->work + 2 * (size_t)s->pp * sizeof *s->sendq));
    for (int32_t k = 0; k < s->n; k++) {
        simrank *r = &s->r[k];
        r->world = o->all_ranks ? k : plc_coords_to_rank(&p->layout, (plc_rank_coords){0, 0, 0, k});
        r->co = plc_rank_to_coords(&p->layout, r->world);
        r->stage = r->co.pp;
        r->prog = &p->programs[p->stage_program[r->stage]];
        r->posted_pc = -1;
        r->done = malloc(sizeof *r->done * (r->prog->ninstrs + 1));
        if (!r->done) plc_oom_raise(sizeof *r->done * (r->prog->ninstrs + 1));
        for (uint32_t i = 0; i < r->prog->ninstrs; i++) r->done[i] = NAN;
    }
    if (setup_groups(s)) {
        rc = -1;
        goto out;
    }
    for (int32_t k = 0; k < s->n; k++) push_work(s, s->n - 1 - k);
    while (s->nwork && !s->failed) {
        int32_t k = s->work[--s->nwork];
        s->r[k].queued = false;
        if (advance(s, k)) break;
    }
    if (s->failed) {
        rc = -1;
        goto out;
    }
    /* everything finished? */
    for (int32_t k = 0; k < s->n; k++) {
        simrank *r = &s->r[k];
        if (r->pc < r->prog->ninstrs) {
            char buf[512];
            size_t len = 0;
            int shown = 0;
            for (int32_t j = 0; j < s->n && shown < 4; j++) {
                simrank *b = &s->r[j];
                if (b->pc >= b->prog->ninstrs) continue;
                const plc_instr *in = &b->prog->instrs[b->pc];
                int w = snprintf(buf + len, sizeof buf - len, "%s rank %lld (stage %lld) at instruction %u (%s%s)",
                                 shown ? ";" : "", (long long)b->world, (long long)b->stage, b->pc, opname(in),
                                 in->wait >= 0 && in->op != PLC_OP_SEND && in->op != PLC_OP_RECV ? ", waiting" : "");
                if (w > 0 && (size_t)w < sizeof buf - len) len += (size_t)w;
                shown++;
            }
            rc = sfail(s, "deadlock: the ranks cannot all finish the step:%s", buf);
            s->status = PLC_E_DEADLOCK;
            goto out;
        }
        for (uint32_t i = 0; i < r->prog->ninstrs; i++)
            if (isnan(r->done[i])) {
                rc = sfail(s, "rank %lld instruction %u (%s) never completes: no matching %s", (long long)r->world, i,
                           opname(&r->prog->instrs[i]),
                           r->prog->instrs[i].op == PLC_OP_SEND ? "RECV" : r->prog->instrs[i].op == PLC_OP_RECV ? "SEND" : "call by every member");
                goto out;
            }
        if (r->t_host > res->end_time) res->end_time = r->t_host;
        if (r->comm_free > res->end_time) res->end_time = r->comm_free;
    }
    res->ranks = s->n;
    res->instructions = s->executed;
out:
    if (s->r)
        for (int32_t k = 0; k < s->n; k++) free(s->r[k].done);
    if (s->sendq)
        for (int64_t k = 0; k < s->n * s->pp; k++) free(s->sendq[k].v);
    if (s->recvq)
        for (int64_t k = 0; k < s->n * s->pp; k++) free(s->recvq[k].v);
    if (s->inst)
        for (int32_t k = 0; k < s->ninst; k++) {
            for (size_t c = 0; c < s->inst[k].ncalls; c++) free(s->inst[k].calls[c].parties);
            free(s->inst[k].calls);
        }
    free(s->r);
    free(s->sendq);
    free(s->recvq);
    free(s->work);
    free(s->inst_of);
    free(s->seq);
    free(s->inst);
    if (rc) return s->status ? s->status : PLC_E_INTERNAL;
    return PLC_OK;
}
