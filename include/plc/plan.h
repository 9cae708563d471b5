/* plc/plan.h: the plan, the one artifact between plc and plrun.
 *
 * A plan is one training step of every rank, lowered in advance: a program
 * (a flat instruction list plus a static buffer layout) per pipeline stage,
 * shared by all ranks of that stage, so the plan does not grow with the
 * data-parallel degree. This header defines the in-memory form that the
 * lowering builds and the loader returns; common/plan_io.c reads and writes
 * the file form (little-endian, versioned, one CRC32 per section, every
 * field typed and validated on load). plc dump, plc diff and plrun share the
 * loader.
 *
 * Ranks. World rank r has coordinates in Megatron's order, tensor-parallel
 * index fastest, then context, data, pipeline:
 *     r = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank))
 * Programs may depend on a rank's coordinates only in the ways documented
 * here (vocabulary shard, parameter shard, data slice, context chunk); the
 * runtime derives those from the coordinates, so programs are shared.
 *
 * Data. DATA_LOAD of micro-batch m on a rank with data-parallel index d
 * reads global samples  step*global_batch + d*(global_batch/dp) + m*mb + i
 * for i < mb (mb = micro_batch), so every layout sees the same samples.
 *
 * Context parallelism (load-balanced). The sequence is cut into 2*cp equal
 * chunks; cp rank c holds chunks c and 2*cp-1-c, in that order, so causal
 * work is even. Its token positions (for DATA_LOAD, ROPE and the attention
 * mask) follow from c. K and V are exchanged by an all-gather over the cp
 * group, which yields chunks in the order (0, 2cp-1, 1, 2cp-2, ...); the
 * attention mask uses those absolute positions. dK and dV of the gathered
 * sequence are reduce-scattered back. Because the all-gather concatenates
 * whole local buffers, the gathered K/V (and dK/dV) of a micro-batch of B
 * sequences are laid out [cp][B][T/cp][KV][hd]: ATTN_FWD/ATTN_BWD with
 * Tk = cp * Tq read them so (identical to [B][Tk][KV][hd] when B = 1).
 *
 * Sequence parallelism. With layout.sp, the residual stream of a micro-batch
 * ([rows, h], rows = B x T/cp in [B][T] order) is split over tp in contiguous
 * row blocks: tp rank t holds rows [t*rows/tp, (t+1)*rows/tp). All-gather over
 * tp restores the [B][T] order; reduce-scatter cuts it again.
 *
 * What the runtime initialises: PARAM and MASTER buffers with tensor >= 0
 * from the generator through their shard mapping (padding elements 0);
 * ADAM_M and ADAM_V to zero. Everything else is written by the program
 * before it is read (gradients by explicit ZERO instructions).
 */
#ifndef PLC_PLAN_H
#define PLC_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plc/job.h"

#define PLC_PLAN_MAGIC "PLCPLAN1" /* 8 bytes at offset 0 */
#define PLC_PLAN_VERSION 5u
/* every buffer offset is a multiple of this many bytes, and plrun's arena
 * starts on such a boundary (the memory plan aligns, the validator and
 * plrun's check hold plans to it, the CPU backend allocates with it) */
#define PLC_PLAN_ALIGN 64u

/* ---- communicator groups -------------------------------------------------
 * A group is described by the rank coordinates that vary inside it; all
 * other coordinates are fixed. plrun builds one communicator per group with
 * MPI_Comm_split (colour = the fixed coordinates, key = the varying ones in
 * rank order). With PLC_GROUP_PP_ENDS, only pipeline ranks 0 and pp-1 are
 * members (tied embeddings); other ranks pass MPI_UNDEFINED. The flag
 * qualifies PLC_DIM_PP: a group with the flag and without the dimension is
 * refused by the validator. plc_group_seat_of (common/plan_groups.c) is the
 * one statement of these rules. */
enum {
    PLC_DIM_TP = 1u << 0,
    PLC_DIM_CP = 1u << 1,
    PLC_DIM_DP = 1u << 2,
    PLC_DIM_PP = 1u << 3,
};
enum { PLC_GROUP_PP_ENDS = 1u << 0 };

typedef struct plc_group {
    uint32_t dims;  /* PLC_DIM_* that vary inside the group */
    uint32_t flags; /* PLC_GROUP_* */
    const char *name; /* "tp", "dp", "dp_cp", "pp", "embed", ... */
} plc_group;

/* ---- buffers ---------------------------------------------------------------
 * Every buffer lives at a fixed offset of one arena per rank. Persistent
 * state (parameters, gradients, optimizer state) comes first; activations and
 * temporaries follow, placed by lifetime with reuse. arena_bytes of the
 * program is the exact peak. */
typedef enum plc_dtype { PLC_F32, PLC_BF16, PLC_I32, PLC_F64, PLC_DTYPE_COUNT } plc_dtype;

typedef enum plc_buf_kind {
    PLC_BUF_PARAM,   /* a (shard of a) global weight; initialised, checkpointed */
    PLC_BUF_GRAD,    /* gradient of a PARAM (same shard) */
    PLC_BUF_ADAM_M,  /* optimizer first moment (shard by ZeRO) */
    PLC_BUF_ADAM_V,  /* optimizer second moment */
    PLC_BUF_MASTER,  /* fp32 master copy when PARAM is bf16 */
    PLC_BUF_ACT,     /* activation kept from forward to backward */
    PLC_BUF_TEMP,    /* short-lived scratch */
    PLC_BUF_COMM,    /* send/recv or collective staging */
    PLC_BUF_DATA,    /* token ids / targets (I32) */
    PLC_BUF_SCALAR,  /* loss, norms, clip factor (F64 or F32) */
    PLC_BUF_KIND_COUNT
} plc_buf_kind;

/* How a PARAM-family buffer maps onto its global tensor. A shard is a block
 * of rows or columns of the global [rows, cols] tensor, or a contiguous
 * range of its row-major flattening (ZeRO); the index comes from the rank
 * coordinates in shard_dims (PLC_DIM_*, combined in rank order). */
typedef enum plc_shard_kind {
    PLC_SHARD_NONE, /* the whole tensor */
    PLC_SHARD_ROWS, /* rows [i*b, min((i+1)*b, rows)), b = plc_shard_block(rows, n), plc/job.h */
    PLC_SHARD_COLS, /* columns likewise */
    PLC_SHARD_FLAT, /* flat elements [i*ceil(N/n), ...), zero-padded at the end */
} plc_shard_kind;

typedef struct plc_buffer {
    const char *name;   /* "L3.wq", "L3.mb2.attn_out", ... */
    plc_buf_kind kind;
    plc_dtype dtype;
    uint64_t offset;    /* bytes from the arena start, PLC_PLAN_ALIGN-aligned */
    uint64_t bytes;
    int64_t rows, cols; /* local shape in elements (rows * cols * size == bytes, or fewer with padding) */
    int32_t tensor;     /* global tensor id (docs/model.md) for PARAM family, else -1 */
    plc_shard_kind shard;
    uint32_t shard_dims; /* PLC_DIM_* giving the shard index */
    int64_t nshards;
    /* ZeRO sharding on top of the shard above (added 2026-11-22): when
     * flat_shards > 1, the buffer holds the flat range
     * [j*c, (j+1)*c), c = ceil(N/flat_shards), of the row-major flattening of
     * the N-element block that shard/shard_dims describe (zero-padded past
     * N); j comes from the coordinates in flat_dims, in rank order (the
     * rank's index in the group of those dims). rows = 1, cols = c.
     * flat_shards = 1, flat_dims = 0: no ZeRO sharding. */
    uint32_t flat_dims;
    int64_t flat_shards;
} plc_buffer;

/* ---- instructions ----------------------------------------------------------
 * Instructions run in list order. Those on PLC_STREAM_COMM are started
 * asynchronously (non-blocking MPI, or NCCL on its own CUDA stream) right
 * after everything before them in the list was issued; an instruction with
 * wait >= 0 does not start until instruction `wait` (an index in the same
 * program) has completed. PLC_OP_WAIT exists to wait on more than one.
 * At the end of a step every started operation has completed.
 *
 * Operands: buf[i] are buffer ids (-1 unused), arg[i] integers, farg[i]
 * floats; the table below gives their meaning per op. Shapes are in
 * elements; "rows" is micro_batch x local sequence length. Backward ops
 * ACCUMULATE into gradient outputs (the lowering zeroes with PLC_OP_ZERO).
 * Element counts never exceed a buffer's capacity (bytes / dtype size); the
 * loader checks every operand against the counts below. Buffers may alias
 * (a gradient bucket covers the gradients of a layer, gaps included): ZERO
 * clears all bytes of its buffer; COPY copies between buffers of equal size. */
#define PLC_INSTR_BUFS 10
#define PLC_INSTR_ARGS 8
#define PLC_INSTR_FARGS 2

typedef enum plc_stream { PLC_STREAM_COMPUTE, PLC_STREAM_COMM, PLC_STREAM_COUNT } plc_stream;

typedef enum plc_phase {
    PLC_PHASE_DATA, PLC_PHASE_FORWARD, PLC_PHASE_RECOMPUTE, PLC_PHASE_BACKWARD,
    PLC_PHASE_GRAD_SYNC, PLC_PHASE_OPTIMIZER, PLC_PHASE_COUNT
} plc_phase;

/* X(name, operands) — the operand text is printed by `plc --help-ops` and
 * documents the contract between lowering and runtime. */
#define PLC_OPS(X)                                                                           \
    X(NOP,          "")                                                                      \
    X(WAIT,         "wait=instruction index")                                                \
    X(ZERO,         "buf0=dst")                                                              \
    X(COPY,         "buf0=dst buf1=src")                                                     \
    X(DATA_LOAD,    "buf0=tokens buf1=targets (I32 [rows]); arg0=micro-batch index, arg1=micro_batch, arg2=local seq len. Sample and position slice come from dp_rank/cp_rank") \
    X(EMBED_FWD,    "buf0=out [rows,h] buf1=tokens buf2=weight shard; arg0=rows arg1=h arg2=vocab_local (vocab_start = tp_rank*vocab_local when sharded, arg3=1)") \
    X(EMBED_BWD,    "buf0=dweight += buf1=tokens buf2=dout; arg0..arg3 as EMBED_FWD")         \
    X(RMSNORM_FWD,  "buf0=out buf1=rstd [rows] buf2=in buf3=weight; arg0=rows arg1=dim farg0=eps") \
    X(RMSNORM_BWD,  "buf0=din += buf1=dweight += buf2=dout buf3=in buf4=weight buf5=rstd; arg0=rows arg1=dim") \
    X(MATMUL,       "buf0=C buf1=A buf2=B; C = op(A)[M,K] op(B)[K,N] + beta C; arg0=M arg1=N arg2=K arg3=transA arg4=transB farg0=beta") \
    X(ROPE_FWD,     "buf0=out buf1=in [B,T,heads,hd]; arg0=B arg1=T arg2=heads arg3=hd farg0=theta (positions from cp_rank, see CP)") \
    X(ROPE_BWD,     "buf0=din += buf1=dout; as ROPE_FWD")                                     \
    X(ATTN_FWD,     "buf0=out buf1=stats (lse [B,H,Tq] or probs [B,H,Tq,Tk]) buf2=q buf3=k buf4=v; arg0=B arg1=Tq arg2=Tk arg3=H arg4=KV arg5=hd arg6=form (0 materialised, 1 flash)") \
    X(ATTN_BWD,     "buf0=dq += buf1=dk += buf2=dv += buf3=dout buf4=q buf5=k buf6=v buf7=out buf8=stats; args as ATTN_FWD") \
    X(SWIGLU_FWD,   "buf0=out buf1=gate buf2=up; arg0=n")                                    \
    X(SWIGLU_BWD,   "buf0=dgate += buf1=dup += buf2=dout buf3=gate buf4=up; arg0=n")          \
    X(LAYERNORM_FWD, "buf0=out buf1=mean buf2=rstd [rows] buf3=in buf4=weight buf5=bias; arg0=rows arg1=dim farg0=eps") \
    X(LAYERNORM_BWD, "buf0=din += buf1=dweight += buf2=dbias += buf3=dout buf4=in buf5=weight buf6=mean buf7=rstd; arg0=rows arg1=dim") \
    X(BIAS_ADD,     "buf0=x [rows,cols] += buf1=bias [cols] per row; arg0=rows arg1=cols")    \
    X(BIAS_BWD,     "buf0=dbias [cols] += column sums of buf1=dout [rows,cols]; arg0=rows arg1=cols") \
    X(GELU_FWD,     "buf0=out buf1=in (tanh approximation); arg0=n")                          \
    X(GELU_BWD,     "buf0=din += buf1=dout buf2=in; arg0=n")                                  \
    X(POS_FWD,      "buf0=x [rows,dim] += buf1=table [seq_len,dim] at each row's absolute position; arg0=rows arg1=dim arg2=1 when the rows are the tp rank's sequence-parallel block (positions from cp_rank and the row's place in the micro-batch, see CP)") \
    X(POS_BWD,      "buf0=dtable [seq_len,dim] += buf1=dout rows at their positions; args as POS_FWD") \
    X(ADD,          "buf0=out buf1=a buf2=b; arg0=n")                                         \
    X(ACCUMULATE,   "buf0=y += buf1=x; arg0=n")                                               \
    X(SCALE,        "buf0=x *= farg0; arg0=n")                                                \
    X(XENT_MAX,     "buf0=rowmax [rows] buf1=logits [rows,vocab_local]; arg0=rows arg1=vocab_local") \
    X(XENT_SUMEXP,  "buf0=rowsum buf1=target_logit buf2=logits buf3=targets buf4=rowmax; arg0=rows arg1=vocab_local arg2=sharded") \
    X(XENT_LOSS,    "buf0=dlogits buf1=loss_sum (F64 scalar +=) buf2=logits buf3=targets buf4=rowmax buf5=rowsum buf6=target_logit; arg0=rows arg1=vocab_local arg2=sharded farg0=gradient scale") \
    X(SUMSQ,        "buf0=acc (F64 scalar +=) buf1=x; arg0=n (elements counted once across replicas: the lowering picks who adds)") \
    X(CLIP_SCALE,   "buf0=scale (F32 scalar) buf1=sumsq (F64); farg0=max norm (0: scale=1). Also records the norm for logging") \
    X(ADAMW,        "buf0=param buf1=grad buf2=m buf3=v buf4=scale (F32 scalar) buf5=master or -1; arg0=n arg1=decay (0/1). lr, betas, eps from the plan's train settings") \
    X(CAST,         "buf0=dst buf1=src; arg0=n (dtype from the buffers)")                    \
    X(ALLREDUCE,    "buf0=data (in place) group; arg0=count arg1=reduction (0 sum, 1 max)")                            \
    X(REDUCE_SCATTER, "buf0=dst [count] buf1=src [count*size] group; arg0=count (sum)")        \
    X(ALLGATHER,    "buf0=dst [count*size] buf1=src [count] group; arg0=count")               \
    X(BROADCAST,    "buf0=data group; arg0=count arg1=root (index in group)")                  \
    X(SEND,         "buf0=data; arg0=count peer=destination pipeline rank (same tp/cp/dp)")    \
    X(RECV,         "buf0=data; arg0=count peer=source pipeline rank")

typedef enum plc_op {
#define PLC_OP_ENUM(name, operands) PLC_OP_##name,
    PLC_OPS(PLC_OP_ENUM)
#undef PLC_OP_ENUM
    PLC_OP_COUNT
} plc_op;

/* ---- the operand contract, one row per op (common/plan_ops.c) -------------
 * Per buffer slot: its dtype class and the elements it must hold, a product
 * of up to four factors taken from the instruction; per integer argument:
 * its range; and whether the op communicates (plc_op_comm). plc_instr_check
 * applies the table and the few rules no table row states (COPY sizes,
 * divisibility, shapes against the model); both the
 * plan validator (every load) and plrun's check before the first step call
 * it, and plrun adds only what needs the communicator. */
typedef enum plc_opd_type {
    PLC_OPD_UNUSED,  /* the slot must be -1 or is ignored */
    PLC_OPD_STORAGE, /* f32 or bf16, the same in every STORAGE slot of the instruction */
    PLC_OPD_ACC,     /* f32, or the storage dtype (a matmul's C: weight gradients) */
    PLC_OPD_FLOAT,   /* f32 or bf16, independently */
    PLC_OPD_F32,
    PLC_OPD_I32,
    PLC_OPD_F64,
    PLC_OPD_ANY
} plc_opd_type;

typedef enum plc_opd_factor {
    PLC_FAC_ONE, PLC_FAC_A0, PLC_FAC_A1, PLC_FAC_A2, PLC_FAC_A3, PLC_FAC_A4, PLC_FAC_A5, PLC_FAC_A6, PLC_FAC_A7,
    PLC_FAC_GROUP, /* members of the instruction's group */
    PLC_FAC_KEYS,  /* attention statistics: arg2 (Tk) when materialised (arg6 = 0), else 1 */
    PLC_FAC_ZERO   /* no count (ZERO and COPY work on whole buffers) */
} plc_opd_factor;

typedef enum plc_arg_kind {
    PLC_ARG_FREE, /* not checked here */
    PLC_ARG_DIM,  /* 0 .. 2^40 */
    PLC_ARG_POS,  /* 1 .. 2^40 */
    PLC_ARG_FLAG  /* 0 or 1 */
} plc_arg_kind;

typedef struct plc_operand_rule {
    uint8_t type;     /* plc_opd_type */
    uint8_t optional; /* -1 allowed */
    uint8_t fac[4];   /* plc_opd_factor, multiplied */
} plc_operand_rule;

/* Whether an op communicates, and with whom: the one statement of it, read
 * by plrun's executor and every plan tool through plc_op_comm. */
typedef enum plc_comm_kind {
    PLC_COMM_NONE,  /* computes on this rank only */
    PLC_COMM_GROUP, /* a collective on the instruction's group */
    PLC_COMM_PEER   /* SEND/RECV: one message to or from the instruction's peer */
} plc_comm_kind;

/* In-place rules: the bytes an operand touches (its count of elements, or
 * the whole buffer for ZERO and COPY) may overlap another operand's only
 * when neither is written, or when the pair is one of the op's in-place
 * pairs and both start at the same byte (the kernel reads each element
 * before it writes it). ALLGATHER's source may also be one slice of its
 * destination; which slice must be the rank's own, and only plrun, which
 * knows the rank, checks that. */
typedef struct plc_op_contract {
    plc_operand_rule buf[PLC_INSTR_BUFS];
    uint8_t arg[PLC_INSTR_ARGS]; /* plc_arg_kind */
    uint8_t comm;                /* plc_comm_kind */
    uint16_t writes;             /* bit k: buf k is written or accumulated into */
    uint8_t ninplace;            /* in-place pairs: written slot, the slot it may be */
    uint8_t inplace[2][2];
} plc_op_contract;

/* the row of op, NULL for an op out of range */
const plc_op_contract *plc_op_contract_of(plc_op op);
/* the row's comm column (PLC_COMM_NONE for an op out of range); an op
 * communicates when this is not PLC_COMM_NONE */
plc_comm_kind plc_op_comm(plc_op op);

typedef struct plc_instr {
    plc_op op;
    plc_stream stream;
    plc_phase phase;
    int32_t layer;  /* source location: layer (-1: none; L = the head) */
    int32_t micro;  /* micro-batch (-1: none) */
    int32_t group;  /* communicator group id (-1: none) */
    int32_t peer;   /* SEND/RECV: the other pipeline rank */
    int32_t wait;   /* instruction index to wait for (-1: none) */
    int32_t buf[PLC_INSTR_BUFS];
    int64_t arg[PLC_INSTR_ARGS];
    double farg[PLC_INSTR_FARGS];
} plc_instr;

/* ---- programs -------------------------------------------------------------
 * A loop the plan file folded (docs/plan-format.md), as the loader found it:
 * rows [first, first + body) repeat count times, each iteration shifted by
 * its strides; depth = enclosing loops. Only a loop's first occurrence is
 * listed (inside an outer loop, its copies in later iterations are not), in
 * order of first. The rows are always expanded; this is for display. */
typedef struct plc_fold {
    uint32_t first, body, count, depth;
} plc_fold;

typedef struct plc_program {
    uint64_t arena_bytes; /* exact peak: every buffer fits below it */
    uint32_t nbuffers;
    plc_buffer *buffers;
    uint32_t ninstrs;
    plc_instr *instrs;
    int32_t loss_buf;  /* F64 scalar holding this rank's loss sum, -1 if none */
    int32_t gnorm_buf; /* F64 scalar holding the global squared norm, -1 if none */
    uint32_t nbuf_folds, ninstr_folds; /* loops of the buffer and instruction tables (none before writing) */
    plc_fold *buf_folds, *instr_folds;
} plc_program;

/* ---- predictions (from the solver, for dump/diff/trace and plrun's report) */
typedef struct plc_prediction {
    double step_time_s, tokens_per_s, mfu;
    double peak_bytes_estimate; /* solver's memory model, most loaded rank */
    double peak_bytes_plan;     /* max arena_bytes over programs */
    double bubble_fraction;     /* the solver's pipeline bubble / step time */
} plc_prediction;

/* ---- the plan ------------------------------------------------------------- */
typedef struct plc_plan {
    uint32_t version;
    const char *spec_path;  /* the spec's file name, no directory (compiler/frontend/frontend.h) */
    const char *spec_source;
    uint64_t spec_len;
    uint64_t spec_hash; /* FNV-1a 64 of the source */
    plc_model model;
    plc_train train;    /* data_path (relative to the spec's directory) points into the plan's strings */
    plc_hw hw;
    int64_t nodes, gpus_per_node;
    plc_layout layout;
    /* the layout block the solver was given (the spec with its -D
     * overrides): each dimension's choice, memory_limit and objective, so
     * that plc diff tells a changed constraint from a reformatted spec and a
     * pinned value from the solver's pick */
    plc_layout_spec constraints;
    plc_prediction pred;
    int64_t world_size;
    uint32_t ngroups;
    plc_group *groups;
    uint32_t nprograms;
    plc_program *programs;
    int32_t *stage_program; /* [layout.pp]: program id of each pipeline rank */
} plc_plan;

typedef struct plc_rank_coords { int64_t tp, cp, dp, pp; } plc_rank_coords;

static inline plc_rank_coords plc_rank_to_coords(const plc_layout *l, int64_t rank)
{
    plc_rank_coords c;
    c.tp = rank % l->tp; rank /= l->tp;
    c.cp = rank % l->cp; rank /= l->cp;
    c.dp = rank % l->dp; rank /= l->dp;
    c.pp = rank;
    return c;
}

static inline int64_t plc_coords_to_rank(const plc_layout *l, plc_rank_coords c)
{
    return c.tp + l->tp * (c.cp + l->cp * (c.dp + l->dp * c.pp));
}

/* Where the rank with coordinates co sits in group g under layout l: a
 * member or not; the colour of its communicator (the world rank of the
 * communicator's first member, equal for the ranks that share one); its
 * index in the communicator (world rank order) and the communicator's size.
 * plc_plan_group_size is that size (the same for every communicator of g). */
typedef struct plc_group_seat {
    int member;
    int64_t colour, index, size;
} plc_group_seat;
plc_group_seat plc_group_seat_of(const plc_layout *l, const plc_group *g, plc_rank_coords co);
int64_t plc_plan_group_size(const plc_layout *l, const plc_group *g);

const char *plc_op_name(plc_op op);          /* "MATMUL" ... or NULL */
const char *plc_op_operands(plc_op op);      /* the operand text above */
const char *plc_dtype_name(plc_dtype t);
size_t plc_dtype_size(plc_dtype t);
const char *plc_buf_kind_name(plc_buf_kind k);
const char *plc_phase_name(plc_phase p);

#endif
