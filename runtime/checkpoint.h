/* checkpoint.h: layout-independent checkpoints and global-tensor gathers.
 *
 * A checkpoint (docs/checkpoint.md) is a safetensors file of global tensors
 * (docs/model.md names and shapes, F32): the parameters under their names,
 * AdamW's moments as optimizer.m.NAME and optimizer.v.NAME, and metadata
 * format = "plc-checkpoint", version = "1", step (the next step to run),
 * seed and config (the model and train settings as JSON). Every
 * rank's shards are gathered on rank 0, which writes the file atomically, so
 * a run can resume under any other layout of the same model: each rank then
 * cuts its own shards out of the global tensors. */
#ifndef PLC_RUNTIME_CHECKPOINT_H
#define PLC_RUNTIME_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/comm.h"
#include "runtime/executor.h"

/* Collective: assembles global tensor `tensor` from the buffers of `kind`
 * of all ranks on rank 0 (into out[R*C]; other ranks pass NULL). Where a
 * tensor has ZeRO-sharded buffers of that kind, those are the truth (the
 * reduced gradient, the updated shard). *found is set to 0 on every rank
 * when no rank holds such a buffer. 0, or -1 with a message. */
int plc_ckpt_gather_tensor(plc_executor *x, plc_comm *comm, const plc_plan *plan, plc_buf_kind kind,
                           int64_t tensor, float *out, int *found, char *err, size_t errlen);

/* Collective: writes a checkpoint of the executor's state (rank 0 writes);
 * without the optimizer's moments it is an initial model (the oracle's). */
int plc_ckpt_save(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path,
                  int with_optimizer, char *err, size_t errlen);

/* Every rank loads its shards of PARAM, ADAM_M and ADAM_V buffers and the
 * step from a checkpoint of the same model (a step-0 checkpoint may lack the
 * optimizer's moments: they start at zero). 0, or -1 with a message. */
int plc_ckpt_load(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path, char *err,
                  size_t errlen);

/* Collective: gathers every global tensor of `kind` and adds it to a
 * safetensors file at path under its name (rank 0 writes). */
int plc_ckpt_write_kind(plc_executor *x, plc_comm *comm, const plc_plan *plan, plc_buf_kind kind,
                        const char *path, char *err, size_t errlen);

#endif
