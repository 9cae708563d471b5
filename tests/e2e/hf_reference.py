#!/usr/bin/env python3
"""hf_reference.py: the loss of a Hugging Face checkpoint written by
`plrun --export-hf`, computed the way transformers computes it, without
transformers or the safetensors package (neither is needed at test time).

The header of model.safetensors is parsed here with json and the tensors are
read with numpy. The forward pass follows transformers' modeling_llama.py
(LlamaForCausalLM: nn.Linear weights [out, in], RMSNorm, rotate-half RoPE with
inv_freq = theta^(-arange(0, hd, 2)/hd) and cos/sin = cat(freqs, freqs),
repeat_kv for grouped-query attention, SiLU-gated MLP) and modeling_gpt2.py
(GPT2LMHeadModel: Conv1D weights [in, out], c_attn split into q, k, v by
columns, LayerNorm, gelu_new, learned positions), in float64.

usage: hf_reference.py HF_DIR BATCHES METRICS [--tol T]
  HF_DIR   the directory --export-hf wrote (model.safetensors, config.json)
  BATCHES  batches.safetensors of plrun --export-oracle (step0.tokens, step0.targets)
  METRICS  plrun's metrics JSON lines; the loss of step 0 is compared
Exits 0 when the relative difference is within --tol (default 1e-5), 1 when
not, 2 on unusable input."""
import json
import math
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {"F32": np.float32, "I32": np.int32, "F64": np.float64}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    data = raw[8 + n :]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        arr = np.frombuffer(data[b:end], dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.astype(np.float64) if e["dtype"] != "I32" else arr.astype(np.int64))
    return out


def llama_logits(w, c, tokens):
    H, nh, nkv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    hd, eps, theta = H // nh, c["rms_norm_eps"], c["rope_theta"]
    B, T = tokens.shape

    def rms(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g

    def rotate_half(x):
        x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
        return torch.cat((-x2, x1), dim=-1)

    inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
    x = w["model.embed_tokens.weight"][tokens]
    for l in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = rms(x, w[p + "input_layernorm.weight"])
        q = (h @ w[p + "self_attn.q_proj.weight"].T).view(B, T, nh, hd).transpose(1, 2)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).view(B, T, nkv, hd).transpose(1, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).view(B, T, nkv, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(nh // nkv, dim=1)
        v = v.repeat_interleave(nh // nkv, dim=1)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + mask, dim=-1) @ v
        x = x + a.transpose(1, 2).reshape(B, T, nh * hd) @ w[p + "self_attn.o_proj.weight"].T
        h = rms(x, w[p + "post_attention_layernorm.weight"])
        g = F.silu(h @ w[p + "mlp.gate_proj.weight"].T) * (h @ w[p + "mlp.up_proj.weight"].T)
        x = x + g @ w[p + "mlp.down_proj.weight"].T
    x = rms(x, w["model.norm.weight"])
    head = w["model.embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    return x @ head.T


def gpt2_logits(w, c, tokens):
    H, nh, eps = c["n_embd"], c["n_head"], c["layer_norm_epsilon"]
    hd = H // nh
    B, T = tokens.shape

    def ln(x, name):
        return F.layer_norm(x, (H,), w[name + ".weight"], w[name + ".bias"], eps)

    mask = torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
    x = w["transformer.wte.weight"][tokens] + w["transformer.wpe.weight"][:T]
    for l in range(c["n_layer"]):
        p = "transformer.h.%d." % l
        h = ln(x, p + "ln_1")
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (t.view(B, T, nh, hd).transpose(1, 2) for t in qkv.split(H, dim=-1))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + mask, dim=-1) @ v
        x = x + a.transpose(1, 2).reshape(B, T, H) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = ln(x, p + "ln_2")
        h = F.gelu(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + h @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = ln(x, "transformer.ln_f")
    head = w["transformer.wte.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    return x @ head.T


def main(argv):
    tol = 1e-5
    if "--tol" in argv:
        i = argv.index("--tol")
        tol = float(argv[i + 1])
        del argv[i : i + 2]
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    hf_dir, batches, metrics = argv[1:]
    with open(hf_dir + "/config.json") as f:
        c = json.load(f)
    w = read_safetensors(hf_dir + "/model.safetensors")
    b = read_safetensors(batches)
    tokens, targets = b["step0.tokens"], b["step0.targets"]
    if c["model_type"] == "llama":
        logits = llama_logits(w, c, tokens)
    elif c["model_type"] == "gpt2":
        logits = gpt2_logits(w, c, tokens)
    else:
        print("unknown model_type %r" % c["model_type"], file=sys.stderr)
        return 2
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)).item()
    with open(metrics) as f:
        plrun_loss = json.loads(f.readline())["loss"]
    rel = abs(plrun_loss - loss) / abs(loss)
    print("%s: loss %.10f (transformers' forward, float64), plrun %.10f, relative difference %.2e"
          % (c["model_type"], loss, plrun_loss, rel))
    return 0 if rel <= tol else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
