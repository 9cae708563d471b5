/* oracle_export.h: plrun --export-oracle DIR, the input of the PyTorch
 * oracle (tests/oracle/torch_oracle.py) in the files docs/checkpoint.md
 * describes: DIR/weights.safetensors (the initial model, a step-0
 * checkpoint), DIR/batches.safetensors (the global batch of every step, with
 * the configuration), DIR/grads.safetensors (the first step's gradient) and,
 * unless --metrics names another file, DIR/metrics.jsonl. Rank 0 writes;
 * gathers are collective. */
#ifndef PLC_ORACLE_EXPORT_H
#define PLC_ORACLE_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/comm.h"
#include "runtime/data.h"
#include "runtime/executor.h"

/* creates DIR and writes the weights and the batches of steps [0, total);
 * the run must start at step 0 */
int plc_oracle_begin(const char *dir, plc_executor *x, plc_comm *comm, const plc_plan *plan,
                     const plc_data *data, int64_t total, char *err, size_t errlen);
/* writes DIR/grads.safetensors (collective), right after step 0 */
int plc_oracle_after_first_step(const char *dir, plc_executor *x, plc_comm *comm,
                                const plc_plan *plan, char *err, size_t errlen);

#endif
