/* data.h: the training data, in the same order for every layout.
 *
 * A source (a token file or the synthetic Markov chain) defines global
 * sample g = step * global_batch + j for every g >= 0: a window of
 * seq_len + 1 tokens. Input position p of the sample is token p of the
 * window and its target is token p + 1. A rank asks for the samples it
 * trains on (a range of j: data parallelism, micro-batches) and the positions
 * it holds (a range of p: context parallelism); whatever the split, the
 * pieces are the same global batch. docs/data.md describes the order. */
#ifndef PLC_DATA_H
#define PLC_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plc/job.h"

typedef struct plc_data plc_data;

/* token file at path (vocab and seq_len from the model; the seed shuffles
 * the order of windows). 0, or -1 with err. */
int plc_data_open_file(plc_data **out, const char *path, const plc_model *m, uint64_t seed, char *err,
                       size_t errlen);
/* the synthetic source for the model's vocabulary. 0, or -1 with err. */
int plc_data_open_synthetic(plc_data **out, const plc_model *m, uint64_t seed, char *err, size_t errlen);
/* Where plrun finds the plan's token file (docs/data.md): a stored absolute
 * path is opened as it is; a relative one (relative to the spec's
 * directory) is taken against data_root when it is not NULL, and otherwise
 * looked for beside the plan file (plan_path's directory), then in the
 * working directory. The path to open goes to out. 0, or -1 with err
 * naming the places tried. */
int plc_data_locate(const char *stored, const char *plan_path, const char *data_root, char *out, size_t outlen,
                    char *err, size_t errlen);
/* Checks the token file at path against the plan's record of it
 * (t->data_size, t->data_crc32): always its size, the CRC-32 of all its
 * bytes when with_crc (plrun asks one rank per node). 0, or -1 with err
 * naming both files' sizes and checksums. */
int plc_data_check_record(const char *path, const plc_train *t, bool with_crc, char *err, size_t errlen);
/* the train block's choice: its data_path as given, or synthetic when it is
 * NULL */
int plc_data_open(plc_data **out, const plc_model *m, const plc_train *t, char *err, size_t errlen);
void plc_data_close(plc_data *d);

/* one line for the log, e.g. "synthetic source: entropy rate 1.0712 nats/token
 * (Markov chain over 256 tokens, 4 successors each)" */
const char *plc_data_describe(const plc_data *d);
/* entropy rate in nats/token for the synthetic source, NaN for token files */
double plc_data_entropy_rate(const plc_data *d);
/* the sequence length and vocabulary the source was opened for */
int64_t plc_data_seq_len(const plc_data *d);
int64_t plc_data_vocab(const plc_data *d);

/* fills tokens and targets, both [n_samples, n_pos] row-major, with samples
 * j = sample0 .. sample0 + n_samples - 1 of step `step` and positions
 * pos0 .. pos0 + n_pos - 1. Thread-safe. 0, or -1 with err (bad ranges, a
 * token outside the vocabulary). */
int plc_data_fetch(const plc_data *d, int64_t step, int64_t global_batch, int64_t sample0, int64_t n_samples,
                   int64_t pos0, int64_t n_pos, int32_t *tokens, int32_t *targets, char *err, size_t errlen);

/* for token files: index of the window that global sample g reads (its first
 * token is window * seq_len); -1 for the synthetic source */
int64_t plc_data_window_of(const plc_data *d, uint64_t g);

#endif

/* ---- exports (runtime/data_export.c) ---- */

/* writes the batches of steps 0 .. steps-1 as the PyTorch oracle reads them
 * (docs/data.md): I32 tensors step{s}.tokens and step{s}.targets of shape
 * [global_batch, seq_len], and config_json (may be NULL) as the "config"
 * metadata. Atomic. 0, or -1 with err. */
int plc_data_export_batches(const plc_data *d, const char *path, int64_t steps, int64_t global_batch,
                            const char *config_json, char *err, size_t errlen);

/* the oracle's "config" object for a model and its training settings, with
 * `steps` as the step count; malloc'd, the caller frees it */
char *plc_oracle_config_json(const plc_model *m, const plc_train *t, int64_t steps);

/* writes n_tokens of the synthetic source's chain (one long sample) as a
 * token file, for runs and tests that want a real file. 0, or -1 with err. */
int plc_synthetic_write_tokens(const char *path, int64_t vocab, uint64_t seed, uint64_t n_tokens, char *err,
                               size_t errlen);
