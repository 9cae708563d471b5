/* oracle_export.c: what the PyTorch oracle needs to replay a run. */
#include "runtime/oracle_export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/errmsg.h"
#include "runtime/checkpoint.h"

static int path_in(char *out, size_t n, const char *dir, const char *file)
{
    return snprintf(out, n, "%s/%s", dir, file) < (int)n ? 0 : -1;
}

int plc_oracle_begin(const char *dir, plc_executor *x, plc_comm *comm, const plc_plan *plan,
                     const plc_data *data, int64_t total, char *err, size_t errlen)
{
    if (plc_exec_next_step(x) != 0)
        return plc_fail(err, errlen, "--export-oracle replays a run from its initial weights; "
                                 "it cannot start at step %lld (--resume)", (long long)plc_exec_next_step(x));
    char path[4096];
    int rc = 0;
    if (comm->rank == 0) {
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            rc = plc_fail(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        if (!rc && path_in(path, sizeof path, dir, "batches.safetensors")) rc = plc_fail(err, errlen, "path too long");
        if (!rc) {
            char *config = plc_oracle_config_json(&plan->model, &plan->train, total);
            rc = plc_data_export_batches(data, path, total, plan->train.global_batch, config, err, errlen);
            free(config);
        }
    }
    double v = rc ? 1 : 0; /* every rank stops when rank 0 could not write */
    plc_comm_max_f64(comm, &v, 1);
    if (v != 0) return rc ? rc : plc_fail(err, errlen, "rank 0 could not write the oracle export");
    if (path_in(path, sizeof path, dir, "weights.safetensors")) return plc_fail(err, errlen, "path too long");
    return plc_ckpt_save(x, comm, plan, path, 0, err, errlen);
}

int plc_oracle_after_first_step(const char *dir, plc_executor *x, plc_comm *comm,
                                const plc_plan *plan, char *err, size_t errlen)
{
    char path[4096];
    if (path_in(path, sizeof path, dir, "grads.safetensors")) return plc_fail(err, errlen, "path too long");
    return plc_ckpt_write_kind(x, comm, plan, PLC_BUF_GRAD, path, err, errlen);
}
