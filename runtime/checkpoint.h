/* checkpoint.h: layout-independent checkpoints and global-tensor gathers.
 *
 * A checkpoint (docs/checkpoint.md) is a safetensors file of global tensors
 * (docs/model.md names and shapes, F32): the parameters under their names,
 * AdamW's moments as optimizer.m.NAME and optimizer.v.NAME, and metadata
 * format = "plc-checkpoint", version = "2", step (the next step to run),
 * seed, config (the model and train settings as JSON), setting.NAME for
 * every setting a resume compares, crc32.TENSOR for every tensor and
 * crc32.__metadata__ over all the other metadata. Every
 * rank's shards are gathered on rank 0, which writes the file atomically, so
 * a run can resume under any other layout of the same model: each rank then
 * cuts its own shards out of the global tensors. */
#ifndef PLC_RUNTIME_CHECKPOINT_H
#define PLC_RUNTIME_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/ckpt_meta.h"
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
 * optimizer's moments: they start at zero). Before anything is used: the
 * metadata's checksum, then every setting (ckpt_meta.h) against
 * the plan's, except those named in allow[0..nallow); each tensor's
 * checksum before it is read. 0, or -1 with a message that names what
 * differs or which tensor is corrupt. The result may differ between ranks
 * (each checks the tensors it reads): callers agree on it. */
int plc_ckpt_load(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path,
                  const char *const *allow, int nallow, char *err, size_t errlen);


/* Collective: a checkpoint into directory dir as step-NNNNNNNN.safetensors
 * (the next step to run), then the completion marker dir/latest naming it
 * (both atomic), then removes all but the newest `keep` step files. The
 * file written is returned in path. 0, or -1 with a message on every rank. */
int plc_ckpt_save_dir(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *dir, int64_t keep,
                      char *path, size_t pathlen, char *err, size_t errlen);

/* --resume PATH: a file as it is, or a directory's latest completed
 * checkpoint. 0, or -1 with a message. */
int plc_ckpt_resolve(const char *path, char *out, size_t outlen, char *err, size_t errlen);

/* Collective: gathers every global tensor of `kind` and adds it to a
 * safetensors file at path under its name (rank 0 writes). */
int plc_ckpt_write_kind(plc_executor *x, plc_comm *comm, const plc_plan *plan, plc_buf_kind kind,
                        const char *path, char *err, size_t errlen);

/* Collective: gathers the weights (bf16 plans: the fp32 masters) on rank 0,
 * which writes them as a Hugging Face checkpoint into dir (hf_names.h). */
int plc_ckpt_export_hf(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *dir, char *err,
                       size_t errlen);

/* Every rank loads its shards of the weights (PARAM and MASTER buffers)
 * from a Hugging Face checkpoint (hf_names.h: a directory or a file); the
 * optimizer's moments stay zero and the run starts at step 0. 0, or -1 with
 * a message naming the file and the tensor. */
int plc_ckpt_load_hf(plc_executor *x, plc_comm *comm, const plc_plan *plan, const char *path, char *err,
                     size_t errlen);

#endif
