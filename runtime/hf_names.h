/* hf_names.h: plc's global tensors under Hugging Face transformers' names.
 *
 * One table per block (Llama: LlamaForCausalLM; GPT: GPT2LMHeadModel) maps
 * each tensor role of common/tensors.h to the Hugging Face tensor it lives
 * in and how (docs/checkpoint.md, "Hugging Face checkpoints"):
 *
 *   COPY        the same [rows, cols] (GPT-2's Conv1D is [in, out] as plc)
 *   TRANSPOSE   nn.Linear's [out, in]: the transpose of plc's [in, out]
 *   ROPE        TRANSPOSE, and within each head the output rows reordered
 *               from plc's interleaved RoPE pairs to transformers'
 *               rotate-half halves: plc column h*hd + 2i + j becomes Hugging
 *               Face row h*hd + j*hd/2 + i (convert_llama_weights_to_hf.py's
 *               `permute`)
 *   COLUMNS     a block of columns of a fused [in, q+k+v] matrix (GPT-2's
 *               c_attn) or a slice of its fused bias
 *
 * Every element of a plc tensor has exactly one place in one Hugging Face
 * tensor (plc_hf_index), and the two directions use that one map, so plc ->
 * Hugging Face -> plc gives back the same bytes.
 *
 * A directory written here loads with
 * `AutoModelForCausalLM.from_pretrained(DIR)`: `model.safetensors` (F32) and
 * `config.json` (LlamaConfig or GPT2Config keys). Reading takes a directory
 * holding `model.safetensors`, or a safetensors file; F32, BF16 or F16. */
#ifndef PLC_RUNTIME_HF_NAMES_H
#define PLC_RUNTIME_HF_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "common/tensors.h"
#include "plc/job.h"

typedef enum plc_hf_transform {
    PLC_HF_COPY,
    PLC_HF_TRANSPOSE,
    PLC_HF_ROPE,
    PLC_HF_COLUMNS,
} plc_hf_transform;

#define PLC_HF_NAME_MAX 96

/* where plc tensor `id` lives in the Hugging Face checkpoint */
typedef struct plc_hf_place {
    char name[PLC_HF_NAME_MAX]; /* e.g. model.layers.0.self_attn.q_proj.weight */
    plc_hf_transform transform;
    int ndim;          /* of the Hugging Face tensor */
    int64_t shape[2];  /* of the Hugging Face tensor; shape[1] = 1 when 1-D */
    int64_t col0;      /* COLUMNS: the first column (or element) of this part */
    int64_t hd;        /* ROPE: the head dimension */
    int64_t rows, cols; /* the plc tensor's shape (cols = 1 when 1-D) */
} plc_hf_place;

/* 0, or -1 with a message when the model has no Hugging Face counterpart
 * (GPT with RoPE positions or kv_heads < heads: GPT2Config has neither; an
 * odd head dimension) */
int plc_hf_supported(const plc_model *m, char *err, size_t errlen);

/* the place of tensor id (0 .. plc_tensor_count - 1); false when out of range */
bool plc_hf_place_of(const plc_model *m, int64_t id, plc_hf_place *p);

/* index into the Hugging Face tensor of element (r, c) of the plc tensor */
int64_t plc_hf_index(const plc_hf_place *p, int64_t r, int64_t c);

/* The role table as documentation: for each row, the role's plc name, the
 * Hugging Face name pattern ({l}: the layer) and the transform's name.
 * false past the last row. */
bool plc_hf_table_row(plc_arch arch, int row, plc_tensor_role *role, const char **pattern,
                      plc_hf_transform *t);
const char *plc_hf_transform_name(plc_hf_transform t);

/* Writes dir/model.safetensors and dir/config.json (each atomically; dir is
 * created when missing) from the global tensors w[id] (F32, plc shapes). */
int plc_hf_write(const plc_model *m, const float *const *w, const char *dir, char *err, size_t errlen);

/* Reads a Hugging Face checkpoint (a directory with model.safetensors, or a
 * .safetensors file) into w[id] (allocated by the caller, plc shapes):
 * every tensor must be present with its Hugging Face shape; F32, BF16 and
 * F16 are widened to F32. A config.json beside it, when present, must agree
 * with the model's shape. 0, or -1 with a message naming the file and the
 * tensor. */
int plc_hf_read(const plc_model *m, const char *path, float *const *w, char *err, size_t errlen);

#endif
