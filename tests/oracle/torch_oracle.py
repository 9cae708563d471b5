#!/usr/bin/python3
"""torch_oracle.py: an independent PyTorch implementation of the model and the
optimizer of docs/model.md, to check plrun's training numerically.

It builds the model from the same initial weights and the same token batches
that plrun exports, trains N steps with AdamW, gradient clipping and the
learning-rate schedule, and compares with what plrun reported:

    /usr/bin/python3 tests/oracle/torch_oracle.py \
        --weights init.safetensors --batches batches.safetensors \
        [--config config.json] [--metrics plrun.jsonl] [--grads grads.safetensors] \
        [--steps N] [--dtype float64|float32] [--tol 1e-5]

Inputs (docs/data.md and docs/checkpoint.md describe the files):
  --weights   safetensors, the global tensors of docs/model.md by name, F32
              (the initial model: a plrun checkpoint at step 0).
  --batches   safetensors with I32 tensors "step{s}.tokens" and
              "step{s}.targets", each [global_batch, seq_len], for every step
              s = 0 .. N-1. Its "__metadata__" may hold the configuration as a
              JSON string under "config" (used when --config is not given).
  --config    JSON (or YAML, if the name ends in .yaml/.yml) object with the
              model and train keys of plc_model / plc_train:
                layers hidden ffn_hidden heads kv_heads vocab seq_len
                tie_embeddings norm_eps rope_theta
                global_batch beta1 beta2 eps weight_decay lr_peak lr_floor
                warmup_steps decay_steps grad_clip steps
              (norm_eps 1e-5, rope_theta 10000, tie_embeddings false,
              grad_clip 0, decay_steps = steps when absent).
  --metrics   plrun's --metrics file: JSON lines with "step" (0-based), "loss",
              "lr", "grad_norm". Every step of the run must be present.
  --grads     safetensors with plrun's gradients of step 0 (the first step),
              named like the weights: the gradient of the mean loss, summed
              over micro-batches and ranks, before clipping.

Comparison: relative error |plrun - oracle| / |oracle| for each step's loss,
learning rate and gradient norm; for gradients, per tensor
max|plrun - oracle| / max|oracle|. Every figure is printed; the exit status
is 1 when one exceeds --tol (default 1e-5), 2 on unusable input.

Conventions the C runtime must share (docs/model.md fixes the rest):
  - clipping: when grad_clip > 0 and the global norm g exceeds it, every
    gradient is multiplied by grad_clip / g (no epsilon);
  - AdamW, step t = s + 1:  p <- p - lr * wd * p   (matrices only)
                            m <- b1 m + (1 - b1) g ; v <- b2 v + (1 - b2) g^2
                            p <- p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
    which is torch.optim.AdamW's update (--selftest checks that);
  - the metrics of step s are the loss of the forward pass of step s (before
    its update), lr(s), and the gradient norm before clipping.

--selftest needs no input: it checks the safetensors reader/writer, the
pieces of the model against independent formulations (RoPE as complex
multiplication, attention as an explicit loop, AdamW and clipping against
torch's own, the LR schedule against the C unit test's known values), then
runs the whole comparison on generated files: float32 against float64 must
agree, and a perturbed metrics file must be caught.
"""

import argparse
import json
import math
import os
import struct
import sys
import tempfile

import numpy as np
import torch

# ---------------------------------------------------------------- safetensors

ST_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
    "I16": np.int16, "I8": np.int8, "U64": np.uint64, "U32": np.uint32, "U16": np.uint16,
    "U8": np.uint8, "BOOL": np.bool_,
}
ST_NAMES = {np.dtype(v).str: k for k, v in ST_DTYPES.items()}


class OracleInputError(Exception):
    """an input file or option that cannot be used (exit status 2)"""


def st_load(path):
    """reads a safetensors file: (dict name -> numpy array, metadata dict)"""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise OracleInputError(f"{path}: {e.strerror}")
    if len(raw) < 8:
        raise OracleInputError(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise OracleInputError(f"{path}: header length {n} is past the end of the file")
    try:
        header = json.loads(raw[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise OracleInputError(f"{path}: bad header: {e}")
    if not isinstance(header, dict):
        raise OracleInputError(f"{path}: header is not a JSON object")
    data = raw[8 + n:]
    meta = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, ent in header.items():
        try:
            dt = np.dtype(ST_DTYPES[ent["dtype"]])
            shape = tuple(int(d) for d in ent["shape"])
            b, e = (int(x) for x in ent["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise OracleInputError(f"{path}: tensor '{name}': bad entry {ent!r}")
        count = int(np.prod(shape, dtype=np.int64))
        if not (0 <= b <= e <= len(data)) or e - b != count * dt.itemsize:
            raise OracleInputError(f"{path}: tensor '{name}': data_offsets [{b}, {e}] do not fit")
        tensors[name] = np.frombuffer(data[b:e], dtype=dt.newbyteorder("<")).reshape(shape).copy()
    return tensors, meta


def st_save(path, tensors, meta=None):
    """writes a safetensors file (names sorted, header padded to 8 bytes)"""
    header, blobs, at = {}, [], 0
    if meta:
        header["__metadata__"] = {str(k): str(v) for k, v in meta.items()}
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        code = ST_NAMES[np.dtype(a.dtype.type).str]
        blob = a.tobytes()
        header[name] = {"dtype": code, "shape": list(a.shape), "data_offsets": [at, at + len(blob)]}
        blobs.append(blob)
        at += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((-len(text)) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)

# ---------------------------------------------------------------- configuration

CONFIG_KEYS = {
    "layers": int, "hidden": int, "ffn_hidden": int, "heads": int, "kv_heads": int, "vocab": int,
    "seq_len": int, "tie_embeddings": bool, "norm_eps": float, "rope_theta": float,
    "global_batch": int, "beta1": float, "beta2": float, "eps": float, "weight_decay": float,
    "lr_peak": float, "lr_floor": float, "warmup_steps": int, "decay_steps": int,
    "grad_clip": float, "steps": int, "arch": str, "positions": str,
}
CONFIG_DEFAULTS = {"norm_eps": 1e-5, "rope_theta": 10000.0, "tie_embeddings": False, "grad_clip": 0.0,
                   "arch": "llama", "positions": "rope"}
# a mixture-of-experts model's keys (docs/model.md); experts = 0: dense
MOE_KEYS = {"experts": int, "experts_per_token": int, "shared_experts": int, "expert_ffn_hidden": int,
            "shared_expert_ffn_hidden": int, "dense_layers": int, "moe_every": int, "router": str,
            "route_scale": float, "aux_loss": float}
MOE_DEFAULTS = {"experts": 0, "experts_per_token": 1, "shared_experts": 0, "expert_ffn_hidden": 0,
                "shared_expert_ffn_hidden": 0, "dense_layers": 0, "moe_every": 1, "router": "softmax",
                "route_scale": 1.0, "aux_loss": 0.0}


def make_config(raw, source):
    if not isinstance(raw, dict):
        raise OracleInputError(f"{source}: the configuration is not an object")
    cfg = dict(CONFIG_DEFAULTS)
    cfg.update(MOE_DEFAULTS)
    for k, v in raw.items():
        if k in CONFIG_KEYS:
            cfg[k] = CONFIG_KEYS[k](v)
        elif k in MOE_KEYS:
            cfg[k] = MOE_KEYS[k](v)
    if "decay_steps" not in cfg and "steps" in cfg:
        cfg["decay_steps"] = cfg["steps"]
    missing = [k for k in CONFIG_KEYS if k not in cfg]
    if missing:
        raise OracleInputError(f"{source}: missing configuration keys: {', '.join(missing)}")
    if cfg["hidden"] % cfg["heads"] or cfg["heads"] % cfg["kv_heads"]:
        raise OracleInputError(f"{source}: heads must divide hidden and kv_heads must divide heads")
    if cfg["arch"] not in ("llama", "gpt") or cfg["positions"] not in ("rope", "learned"):
        raise OracleInputError(f"{source}: arch must be llama or gpt, positions rope or learned")
    if cfg["positions"] == "rope" and (cfg["hidden"] // cfg["heads"]) % 2:
        raise OracleInputError(f"{source}: the head dimension must be even for RoPE")
    if cfg["experts"] and (cfg["arch"] != "llama" or cfg["router"] not in ("softmax", "sigmoid") or
                           not 1 <= cfg["experts_per_token"] <= cfg["experts"]):
        raise OracleInputError(f"{source}: a mixture of experts needs arch llama, router softmax or sigmoid "
                               "and 1 <= experts_per_token <= experts")
    return cfg


def is_moe_layer(cfg, l):
    """common/tensors.c's plc_layer_is_moe"""
    d = cfg["dense_layers"]
    return cfg["experts"] > 0 and l >= d and (l - d) % max(cfg["moe_every"], 1) == 0


def load_config(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise OracleInputError(f"{path}: {e.strerror}")
    if path.endswith((".yaml", ".yml")):
        import yaml
        raw = yaml.safe_load(text)
    else:
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise OracleInputError(f"{path}: {e}")
    return make_config(raw, path)

# ---------------------------------------------------------------- the model

def tensor_table(cfg):
    """[(name, shape, std or None for ones, weight decay)] in id order, as common/tensors.c"""
    H, F, V, L = cfg["hidden"], cfg["ffn_hidden"], cfg["vocab"], cfg["layers"]
    hd = H // cfg["heads"]
    q, kv = cfg["heads"] * hd, cfg["kv_heads"] * hd
    out_std = 0.02 / math.sqrt(2 * L)
    if cfg["arch"] == "gpt":  # Hugging Face GPT-2's names; biases zero, not decayed
        t = [("wte.weight", (V, H), 0.02, True)]
        if cfg["positions"] == "learned":
            t.append(("wpe.weight", (cfg["seq_len"], H), 0.02, True))
        for l in range(L):
            p = f"h.{l}."
            t += [(p + "ln_1.weight", (H,), None, False), (p + "ln_1.bias", (H,), 0.0, False),
                  (p + "attn.q.weight", (H, q), 0.02, True), (p + "attn.q.bias", (q,), 0.0, False),
                  (p + "attn.k.weight", (H, kv), 0.02, True), (p + "attn.k.bias", (kv,), 0.0, False),
                  (p + "attn.v.weight", (H, kv), 0.02, True), (p + "attn.v.bias", (kv,), 0.0, False),
                  (p + "attn.c_proj.weight", (q, H), out_std, True), (p + "attn.c_proj.bias", (H,), 0.0, False),
                  (p + "ln_2.weight", (H,), None, False), (p + "ln_2.bias", (H,), 0.0, False),
                  (p + "mlp.c_fc.weight", (H, F), 0.02, True), (p + "mlp.c_fc.bias", (F,), 0.0, False),
                  (p + "mlp.c_proj.weight", (F, H), out_std, True), (p + "mlp.c_proj.bias", (H,), 0.0, False)]
        t += [("ln_f.weight", (H,), None, False), ("ln_f.bias", (H,), 0.0, False)]
        if not cfg["tie_embeddings"]:
            t.append(("lm_head", (H, V), 0.02, True))
        return t
    t = [("tok_emb", (V, H), 0.02, True)]
    if cfg["positions"] == "learned":
        t.append(("pos_emb", (cfg["seq_len"], H), 0.02, True))
    for l in range(L):
        p = f"layers.{l}."
        t += [(p + "attn_norm", (H,), None, False), (p + "wq", (H, q), 0.02, True),
              (p + "wk", (H, kv), 0.02, True), (p + "wv", (H, kv), 0.02, True),
              (p + "wo", (q, H), out_std, True), (p + "mlp_norm", (H,), None, False)]
        if not is_moe_layer(cfg, l):
            t += [(p + "w_gate", (H, F), 0.02, True), (p + "w_up", (H, F), 0.02, True),
                  (p + "w_down", (F, H), out_std, True)]
            continue
        E, Fe, Fs = cfg["experts"], cfg["expert_ffn_hidden"], cfg["shared_experts"] * cfg["shared_expert_ffn_hidden"]
        # the experts' matrices stacked [E * hidden, Fe]; w_down holds each expert's transpose
        t += [(p + "router", (H, E), 0.02, True), (p + "experts.w_gate", (E * H, Fe), 0.02, True),
              (p + "experts.w_up", (E * H, Fe), 0.02, True), (p + "experts.w_down", (E * H, Fe), out_std, True)]
        if Fs:
            t += [(p + "shared.w_gate", (H, Fs), 0.02, True), (p + "shared.w_up", (H, Fs), 0.02, True),
                  (p + "shared.w_down", (Fs, H), out_std, True)]
    t.append(("final_norm", (H,), None, False))
    if not cfg["tie_embeddings"]:
        t.append(("lm_head", (H, V), 0.02, True))
    return t


def rmsnorm(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def rope_tables(S, hd, theta, dtype):
    """cos, sin [S, hd/2]: pair i of position p turns by p * theta^(-2i/hd)"""
    i = torch.arange(hd // 2, dtype=torch.float64)
    inv = theta ** (-2.0 * i / hd)
    ang = torch.arange(S, dtype=torch.float64)[:, None] * inv[None, :]
    return torch.cos(ang).to(dtype), torch.sin(ang).to(dtype)


def rope(x, cos, sin):
    """x [B, S, heads, hd]: rotates the interleaved pairs (2i, 2i+1)"""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


def attention(q, k, v, heads, kv_heads):
    """causal GQA: q [B, S, heads, hd], k/v [B, S, kv_heads, hd] -> [B, S, heads * hd]"""
    B, S, _, hd = q.shape
    group = heads // kv_heads
    k = k.repeat_interleave(group, dim=2)  # q head j reads kv head j // group
    v = v.repeat_interleave(group, dim=2)
    qh, kh, vh = (t.transpose(1, 2) for t in (q, k, v))  # [B, heads, S, hd]
    scores = qh @ kh.transpose(-1, -2) / math.sqrt(hd)
    mask = torch.ones(S, S, dtype=torch.bool).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    a = torch.softmax(scores, dim=-1) @ vh
    return a.transpose(1, 2).reshape(B, S, heads * hd)


def forward_loss_gpt(P, tokens, targets, cfg):
    """the GPT block from torch's own functional modules: nn.Embedding,
    nn.LayerNorm, nn.Linear with bias (plc stores weights [in, out], torch's
    Linear [out, in]: passed transposed), F.gelu(approximate="tanh")"""
    F_ = torch.nn.functional
    B, S = tokens.shape
    heads, kvh = cfg["heads"], cfg["kv_heads"]
    H = cfg["hidden"]
    hd = H // heads
    eps = cfg["norm_eps"]
    dtype = P["wte.weight"].dtype
    rotary = cfg["positions"] == "rope"
    if rotary:
        cos, sin = rope_tables(S, hd, cfg["rope_theta"], dtype)
    x = F_.embedding(tokens.long(), P["wte.weight"])
    if not rotary:
        x = x + F_.embedding(torch.arange(S), P["wpe.weight"])[None]
    for l in range(cfg["layers"]):
        p = f"h.{l}."
        h = F_.layer_norm(x, (H,), P[p + "ln_1.weight"], P[p + "ln_1.bias"], eps)
        q = F_.linear(h, P[p + "attn.q.weight"].t(), P[p + "attn.q.bias"]).view(B, S, heads, hd)
        k = F_.linear(h, P[p + "attn.k.weight"].t(), P[p + "attn.k.bias"]).view(B, S, kvh, hd)
        v = F_.linear(h, P[p + "attn.v.weight"].t(), P[p + "attn.v.bias"]).view(B, S, kvh, hd)
        if rotary:
            q, k = rope(q, cos, sin), rope(k, cos, sin)
        a = attention(q, k, v, heads, kvh)
        x = x + F_.linear(a, P[p + "attn.c_proj.weight"].t(), P[p + "attn.c_proj.bias"])
        h = F_.layer_norm(x, (H,), P[p + "ln_2.weight"], P[p + "ln_2.bias"], eps)
        g = F_.gelu(F_.linear(h, P[p + "mlp.c_fc.weight"].t(), P[p + "mlp.c_fc.bias"]), approximate="tanh")
        x = x + F_.linear(g, P[p + "mlp.c_proj.weight"].t(), P[p + "mlp.c_proj.bias"])
    x = F_.layer_norm(x, (H,), P["ln_f.weight"], P["ln_f.bias"], eps)
    head = P["wte.weight"].t() if cfg["tie_embeddings"] else P["lm_head"]
    logits = x @ head
    return F_.cross_entropy(logits.reshape(B * S, -1), targets.reshape(B * S).long())


def moe_ffn(P, p, h, cfg):
    """an MoE layer's feed-forward on h [B, S, H], written per expert with
    torch.topk and index masks (plrun permutes rows instead): returns the
    output and the sequences' load-balancing loss, summed over the batch,
    aux * E * sum_e f_e P_e with f_e the sequence's share of its S * k
    choices taking e and P_e its mean probability of e (sigmoid: the score
    over the token's sum of scores). Dropless."""
    B, S, H = h.shape
    E, k = cfg["experts"], cfg["experts_per_token"]
    x = h.reshape(B * S, H)
    z = x @ P[p + "router"]
    if cfg["router"] == "softmax":
        scores = torch.softmax(z, dim=-1)
        share = scores
    else:
        scores = torch.sigmoid(z)
        share = scores / scores.sum(-1, keepdim=True)
    top, idx = torch.topk(scores, k, dim=-1)
    w = cfg["route_scale"] * top / top.sum(-1, keepdim=True)
    Fe = cfg["expert_ffn_hidden"]
    wg = P[p + "experts.w_gate"].view(E, H, Fe)
    wu = P[p + "experts.w_up"].view(E, H, Fe)
    wd = P[p + "experts.w_down"].view(E, H, Fe)
    out = torch.zeros_like(x)
    for e in range(E):
        rows, slot = (idx == e).nonzero(as_tuple=True)
        if rows.numel() == 0:
            continue
        xe = x[rows]
        g = xe @ wg[e]
        y = (g * torch.sigmoid(g) * (xe @ wu[e])) @ wd[e].t()
        out = out.index_add(0, rows, w[rows, slot][:, None] * y)
    if cfg["shared_experts"]:
        g = x @ P[p + "shared.w_gate"]
        out = out + (g * torch.sigmoid(g) * (x @ P[p + "shared.w_up"])) @ P[p + "shared.w_down"]
    aux = torch.zeros((), dtype=x.dtype)
    if cfg["aux_loss"] > 0:
        chosen = torch.zeros(B * S, E, dtype=x.dtype).scatter_(1, idx, 1.0).view(B, S, E)
        f = chosen.sum(1) / (S * k)            # [B, E], no gradient
        Pm = share.view(B, S, E).mean(1)       # [B, E]
        aux = cfg["aux_loss"] * E * (f * Pm).sum()
    return out.view(B, S, H), aux


def forward_loss(P, tokens, targets, cfg):
    """mean cross-entropy over every token of the batch"""
    return forward_objective(P, tokens, targets, cfg)[0]


def forward_objective(P, tokens, targets, cfg):
    """(mean cross-entropy, the trained objective: it plus the MoE layers'
    load-balancing loss, per sequence, over the global batch)"""
    if cfg["arch"] == "gpt":
        ce = forward_loss_gpt(P, tokens, targets, cfg)
        return ce, ce
    B, S = tokens.shape
    heads, kvh = cfg["heads"], cfg["kv_heads"]
    hd = cfg["hidden"] // heads
    eps = cfg["norm_eps"]
    dtype = P["tok_emb"].dtype
    cos, sin = rope_tables(S, hd, cfg["rope_theta"], dtype)
    x = P["tok_emb"][tokens]
    aux = 0.0
    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        h = rmsnorm(x, P[p + "attn_norm"], eps)
        q = (h @ P[p + "wq"]).view(B, S, heads, hd)
        k = (h @ P[p + "wk"]).view(B, S, kvh, hd)
        v = (h @ P[p + "wv"]).view(B, S, kvh, hd)
        a = attention(rope(q, cos, sin), rope(k, cos, sin), v, heads, kvh)
        x = x + a @ P[p + "wo"]
        h = rmsnorm(x, P[p + "mlp_norm"], eps)
        if is_moe_layer(cfg, l):
            y, a_l = moe_ffn(P, p, h, cfg)
            x = x + y
            aux = aux + a_l
            continue
        g = h @ P[p + "w_gate"]
        x = x + (g * torch.sigmoid(g) * (h @ P[p + "w_up"])) @ P[p + "w_down"]
    x = rmsnorm(x, P["final_norm"], eps)
    head = P["tok_emb"].t() if cfg["tie_embeddings"] else P["lm_head"]
    logits = x @ head
    ce = torch.nn.functional.cross_entropy(logits.reshape(B * S, -1), targets.reshape(B * S).long())
    return ce, ce + aux / B

# ---------------------------------------------------------------- the optimizer

def lr_at(cfg, s):
    """docs/model.md's schedule, the same expression as common/lr_schedule.c"""
    s = max(s, 0)
    peak, floor, warm, decay = cfg["lr_peak"], cfg["lr_floor"], cfg["warmup_steps"], cfg["decay_steps"]
    if s < warm:
        return peak * (s + 1) / warm
    if s >= decay:
        return floor
    progress = (s - warm) / (decay - warm)
    return floor + (peak - floor) * (1.0 + math.cos(math.pi * progress)) / 2.0


class AdamW:
    """the update of docs/model.md, written out (equal to torch.optim.AdamW)"""

    def __init__(self, params, decay, cfg):
        self.params, self.decay, self.cfg = params, decay, cfg
        self.m = {n: torch.zeros_like(p) for n, p in params.items()}
        self.v = {n: torch.zeros_like(p) for n, p in params.items()}
        self.t = 0

    @torch.no_grad()
    def step(self, lr):
        c = self.cfg
        self.t += 1
        b1, b2 = c["beta1"], c["beta2"]
        bc1, bc2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for n, p in self.params.items():
            g = p.grad
            if self.decay[n]:
                p.mul_(1 - lr * c["weight_decay"])
            self.m[n].mul_(b1).add_(g, alpha=1 - b1)
            self.v[n].mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (self.v[n] / bc2).sqrt().add_(c["eps"])
            p.addcdiv_(self.m[n] / bc1, denom, value=-lr)


@torch.no_grad()
def clip_gradients(params, clip):
    """global L2 norm before clipping; scales the gradients when it exceeds clip > 0"""
    norm = math.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in params.values()))
    if clip > 0 and norm > clip:
        for p in params.values():
            p.grad.mul_(clip / norm)
    return norm

# ---------------------------------------------------------------- training

def load_weights(path, cfg, dtype):
    tensors, _ = st_load(path)
    params, decay = {}, {}
    for name, shape, _, wd in tensor_table(cfg):
        if name not in tensors:
            raise OracleInputError(f"{path}: tensor '{name}' is missing")
        a = tensors[name]
        if tuple(a.shape) != tuple(shape):
            raise OracleInputError(f"{path}: tensor '{name}' has shape {list(a.shape)}, expected {list(shape)}")
        params[name] = torch.tensor(a.astype(np.float64)).to(dtype).requires_grad_(True)
        decay[name] = wd
    extra = sorted(set(tensors) - set(params))
    if extra:
        print(f"oracle: note: {path}: ignoring {len(extra)} other tensors ({extra[0]}, ...)")
    return params, decay


def load_batches(path, cfg, steps):
    tensors, meta = st_load(path)
    batches = []
    shape = (cfg["global_batch"], cfg["seq_len"])
    for s in range(steps):
        pair = []
        for kind in ("tokens", "targets"):
            name = f"step{s}.{kind}"
            if name not in tensors:
                raise OracleInputError(f"{path}: tensor '{name}' is missing (needed for {steps} steps)")
            a = tensors[name]
            if tuple(a.shape) != shape:
                raise OracleInputError(f"{path}: '{name}' has shape {list(a.shape)}, expected {list(shape)}")
            if a.min() < 0 or a.max() >= cfg["vocab"]:
                raise OracleInputError(f"{path}: '{name}' holds tokens outside [0, {cfg['vocab']})")
            pair.append(torch.tensor(a.astype(np.int64)))
        batches.append(tuple(pair))
    return batches


def train(params, decay, batches, cfg):
    """runs len(batches) steps; returns per-step records and the step-0 gradients"""
    opt = AdamW(params, decay, cfg)
    records, grads0 = [], None
    for s, (tokens, targets) in enumerate(batches):
        for p in params.values():
            p.grad = None
        loss, objective = forward_objective(params, tokens, targets, cfg)
        objective.backward()
        if s == 0:
            grads0 = {n: p.grad.detach().clone() for n, p in params.items()}
        norm = clip_gradients(params, cfg["grad_clip"])
        lr = lr_at(cfg, s)
        opt.step(lr)
        records.append({"step": s, "loss": float(loss), "lr": lr, "grad_norm": norm})
    return records, grads0


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def read_metrics(path):
    out = {}
    try:
        with open(path) as f:
            for i, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    out[int(r["step"])] = r
                except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                    raise OracleInputError(f"{path}:{i}: not a metrics line: {e}")
    except OSError as e:
        raise OracleInputError(f"{path}: {e.strerror}")
    return out


def compare(records, grads0, metrics, grads_file, tol, out=None):
    """prints the errors; returns the largest one"""
    out = out or sys.stdout
    worst = 0.0
    if metrics is not None:
        print(f"{'step':>5} {'oracle loss':>16} {'plrun loss':>16} {'rel err':>9} {'lr err':>9} {'gnorm err':>9}",
              file=out)
        for r in records:
            m = metrics.get(r["step"])
            if m is None:
                raise OracleInputError(f"metrics: step {r['step']} is missing")
            vals = [m.get(k) for k in ("loss", "lr", "grad_norm")]
            if any(not isinstance(v, (int, float)) for v in vals):
                print(f"{r['step']:>5} plrun reported a non-number: {vals}", file=out)
                worst = math.inf
                continue
            e = [rel(vals[0], r["loss"]), rel(vals[1], r["lr"]), rel(vals[2], r["grad_norm"])]
            worst = max(worst, *e)
            print(f"{r['step']:>5} {r['loss']:>16.9f} {vals[0]:>16.9f} {e[0]:>9.2e} {e[1]:>9.2e} {e[2]:>9.2e}",
                  file=out)
    if grads_file is not None:
        their = grads_file
        gworst = 0.0
        # relative to the tensor's largest gradient, floored at 1e-3 of the
        # model's largest: a gradient zero by the math (a key bias: softmax
        # ignores a shift shared by every key) holds only rounding noise
        gmax = max((float(g.double().abs().max()) for g in grads0.values()), default=0.0)
        for n, g in grads0.items():
            if n not in their:
                raise OracleInputError(f"gradients: tensor '{n}' is missing")
            t = torch.tensor(their[n].astype(np.float64))
            ref = g.double()
            if tuple(t.shape) != tuple(ref.shape):
                raise OracleInputError(f"gradients: '{n}' has shape {list(t.shape)}, expected {list(ref.shape)}")
            e = float((t - ref).abs().max()) / max(float(ref.abs().max()), 1e-3 * gmax, 1e-30)
            gworst = max(gworst, e)
            if e > tol:
                print(f"gradient {n}: max rel err {e:.2e}", file=out)
        print(f"gradients of step 0: max relative error {gworst:.2e} over {len(grads0)} tensors", file=out)
        worst = max(worst, gworst)
    return worst


def run(args):
    if not args.weights or not args.batches:
        raise OracleInputError("--weights and --batches are required (or --selftest)")
    if args.config:
        cfg = load_config(args.config)
    else:
        _, meta = st_load(args.batches)
        if "config" not in meta:
            raise OracleInputError(f"{args.batches}: no \"config\" metadata; pass --config")
        try:
            cfg = make_config(json.loads(meta["config"]), args.batches)
        except json.JSONDecodeError as e:
            raise OracleInputError(f"{args.batches}: config metadata: {e}")
    steps = args.steps if args.steps is not None else cfg["steps"]
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    params, decay = load_weights(args.weights, cfg, dtype)
    batches = load_batches(args.batches, cfg, steps)
    records, grads0 = train(params, decay, batches, cfg)
    if args.out_metrics:
        with open(args.out_metrics, "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
    if args.out_grads:
        st_save(args.out_grads, {n: g.float().numpy() for n, g in grads0.items()})
    metrics = read_metrics(args.metrics) if args.metrics else None
    their_grads = st_load(args.grads)[0] if args.grads else None
    if metrics is None and their_grads is None:
        for r in records:
            print(f"step {r['step']}: loss {r['loss']:.9f} lr {r['lr']:.6e} grad norm {r['grad_norm']:.6f}")
        return 0
    worst = compare(records, grads0, metrics, their_grads, args.tol)
    ok = worst <= args.tol
    print(f"oracle: {steps} steps, {args.dtype}: max relative error {worst:.2e} "
          f"({'within' if ok else 'ABOVE'} tolerance {args.tol:g})")
    return 0 if ok else 1

# ---------------------------------------------------------------- self-test

def random_setup(cfg, seed, directory, tag):
    """initial weights by the init rule and random batches, as files"""
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape, std, _ in tensor_table(cfg):
        weights[name] = (np.ones(shape) if std is None else rng.normal(0.0, std, shape)).astype(np.float32)
        if std is None:  # perturb the norms so their gradients matter
            weights[name] += rng.normal(0.0, 0.1, shape).astype(np.float32)
    batches = {}
    V = cfg["vocab"]
    for s in range(cfg["steps"]):
        # a learnable sequence: next = 5 cur + 3 mod vocab, with a random token now and then
        seq = rng.integers(0, V, (cfg["global_batch"], cfg["seq_len"] + 1))
        for t in range(1, cfg["seq_len"] + 1):
            keep = rng.random(cfg["global_batch"]) < 0.9
            seq[:, t] = np.where(keep, (5 * seq[:, t - 1] + 3) % V, seq[:, t])
        seq = seq.astype(np.int32)
        batches[f"step{s}.tokens"], batches[f"step{s}.targets"] = seq[:, :-1].copy(), seq[:, 1:].copy()
    wpath, bpath = (os.path.join(directory, f"{tag}_{n}.safetensors") for n in ("weights", "batches"))
    st_save(wpath, weights)
    st_save(bpath, batches, {"config": json.dumps(cfg)})
    return wpath, bpath


def check(cond, what):
    print(f"  {'ok  ' if cond else 'FAIL'} {what}")
    return bool(cond)


def selftest_pieces():
    ok = True
    torch.manual_seed(0)
    # RoPE: interleaved pairs are complex numbers multiplied by e^{i p theta_i}
    B, S, Hh, hd = 2, 7, 3, 8
    x = torch.randn(B, S, Hh, hd, dtype=torch.float64)
    cos, sin = rope_tables(S, hd, 10000.0, torch.float64)
    xc = torch.view_as_complex(x.reshape(B, S, Hh, hd // 2, 2))
    ang = torch.arange(S, dtype=torch.float64)[:, None] * 10000.0 ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ref = torch.view_as_real(xc * torch.polar(torch.ones_like(ang), ang)[None, :, None, :]).flatten(-2)
    ok &= check(torch.allclose(rope(x, cos, sin), ref, rtol=0, atol=1e-12), "RoPE equals complex rotation")
    # attention: an explicit loop over heads and positions
    heads, kvh = 4, 2
    q = torch.randn(B, S, heads, hd, dtype=torch.float64)
    k = torch.randn(B, S, kvh, hd, dtype=torch.float64)
    v = torch.randn(B, S, kvh, hd, dtype=torch.float64)
    out = attention(q, k, v, heads, kvh).view(B, S, heads, hd)
    ref = torch.zeros_like(out)
    for b in range(B):
        for h in range(heads):
            kv = h // (heads // kvh)
            for i in range(S):
                w = torch.softmax(torch.stack([q[b, i, h] @ k[b, j, kv] for j in range(i + 1)]) / math.sqrt(hd), 0)
                ref[b, i, h] = sum(w[j] * v[b, j, kv] for j in range(i + 1))
    ok &= check(torch.allclose(out, ref, rtol=0, atol=1e-12), "causal GQA attention equals the loop")
    # RMSNorm by its definition, element by element
    x = torch.randn(5, 6, dtype=torch.float64)
    w = torch.randn(6, dtype=torch.float64)
    ref = torch.stack([x[i] / math.sqrt(float((x[i] ** 2).mean()) + 1e-5) * w for i in range(5)])
    ok &= check(torch.allclose(rmsnorm(x, w, 1e-5), ref, rtol=0, atol=1e-12), "RMSNorm by definition")
    # learning rate: the known values of tests/unit/test_common_lr.c
    c = {"lr_peak": 1e-3, "lr_floor": 1e-4, "warmup_steps": 10, "decay_steps": 110}
    ok &= check(lr_at(c, 0) == 1e-3 * 1 / 10 and lr_at(c, 9) == 1e-3 and lr_at(c, 110) == 1e-4
                and abs(lr_at(c, 35) - 0.00086819805153394639) < 1e-18
                and abs(lr_at(c, 60) - 5.5e-4) < 1e-15, "LR schedule known values")
    # AdamW and clipping against torch's implementations
    cfg = {"beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.1}
    mine = {"a": torch.randn(4, 5, dtype=torch.float64, requires_grad=True),
            "n": torch.randn(5, dtype=torch.float64, requires_grad=True)}
    theirs = {n: p.detach().clone().requires_grad_(True) for n, p in mine.items()}
    opt = AdamW(mine, {"a": True, "n": False}, cfg)
    topt = torch.optim.AdamW([{"params": [theirs["a"]], "weight_decay": 0.1},
                              {"params": [theirs["n"]], "weight_decay": 0.0}],
                             lr=1.0, betas=(0.9, 0.95), eps=1e-8)
    norms = []
    for step in range(5):
        lr = 1e-2 * (step + 1)
        for group in topt.param_groups:
            group["lr"] = lr
        for d in (mine, theirs):
            for p in d.values():
                p.grad = None
            loss = (d["a"].sin().sum() * d["n"].cos().sum()) ** 2
            loss.backward()
        norm = clip_gradients(mine, 0.5)
        tnorm = torch.nn.utils.clip_grad_norm_(list(theirs.values()), 0.5)
        norms.append((norm, float(tnorm)))
        opt.step(lr)
        topt.step()
    norm, tnorm = norms[0]  # later steps see parameters that differ by torch's epsilon
    ok &= check(norm > 0.5 and abs(norm - tnorm) < 1e-12 * norm, "gradient norm equals clip_grad_norm_'s")
    # torch adds 1e-6 to the norm before dividing; the update differs by that much at most
    diff = max(float((mine[n] - theirs[n]).abs().max()) for n in mine)
    ok &= check(diff < 1e-7, f"AdamW + clipping equal torch.optim.AdamW (max diff {diff:.1e})")
    return ok


def selftest_files():
    ok = True
    with tempfile.TemporaryDirectory() as d:
        # safetensors: round trip, and damage refused
        p = os.path.join(d, "t.safetensors")
        a = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "y": np.array([-1, 7], dtype=np.int32)}
        st_save(p, a, {"k": "v"})
        b, meta = st_load(p)
        ok &= check(all(np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a) and meta == {"k": "v"},
                    "safetensors round trip")
        with open(p, "rb") as f:
            raw = f.read()
        refused = 0
        for cut in (4, 20, len(raw) - 1):
            with open(p, "wb") as f:
                f.write(raw[:cut])
            try:
                st_load(p)
            except OracleInputError:
                refused += 1
        ok &= check(refused == 3, "truncated safetensors files refused")

        base = {"layers": 2, "hidden": 16, "ffn_hidden": 24, "heads": 4, "kv_heads": 2, "vocab": 32,
                "seq_len": 8, "global_batch": 3, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8,
                "weight_decay": 0.1, "lr_peak": 3e-3, "lr_floor": 3e-4, "warmup_steps": 2,
                "decay_steps": 8, "grad_clip": 1.2, "steps": 10}
        for tied in (False, True):
            cfg = make_config(dict(base, tie_embeddings=tied), "selftest")
            tag = "tied" if tied else "untied"
            wpath, bpath = random_setup(cfg, 1 + tied, d, tag)
            runs = {}
            for name, dt in (("float64", torch.float64), ("float32", torch.float32)):
                params, decay = load_weights(wpath, cfg, dt)
                runs[name] = train(params, decay, load_batches(bpath, cfg, cfg["steps"]), cfg)
            (r64, g64), (r32, g32) = runs["float64"], runs["float32"]
            ok &= check(r64[0]["loss"] > 0 and abs(r64[0]["loss"] - math.log(cfg["vocab"])) < 0.1,
                        f"{tag}: first loss {r64[0]['loss']:.4f} near ln(vocab) = {math.log(cfg['vocab']):.4f}")
            ok &= check(r64[-1]["loss"] < r64[0]["loss"] - 0.01, f"{tag}: the loss falls over 10 steps "
                        f"({r64[0]['loss']:.4f} -> {r64[-1]['loss']:.4f})")
            clipped = sum(r["grad_norm"] > cfg["grad_clip"] for r in r64)
            ok &= check(0 < clipped < len(r64), f"{tag}: clipping active in {clipped} of {len(r64)} steps")
            # float32 stands in for plrun: write its metrics and gradients, compare to float64
            mpath, gpath = os.path.join(d, f"{tag}.jsonl"), os.path.join(d, f"{tag}_grads.safetensors")
            with open(mpath, "w") as f:
                for r in r32:
                    f.write(json.dumps(r) + "\n")
            st_save(gpath, {n: g.numpy() for n, g in g32.items()})
            sink = open(os.devnull, "w")
            worst = compare(r64, g64, read_metrics(mpath), st_load(gpath)[0], 1e-4, out=sink)
            ok &= check(worst < 1e-4, f"{tag}: float32 run within 1e-4 of float64 (max rel err {worst:.1e})")
            # a wrong loss at one step must be caught
            bad = [dict(r) for r in r32]
            bad[5]["loss"] *= 1 + 1e-3
            with open(mpath, "w") as f:
                for r in bad:
                    f.write(json.dumps(r) + "\n")
            worst = compare(r64, g64, read_metrics(mpath), None, 1e-4, out=sink)
            ok &= check(worst > 1e-4, f"{tag}: a loss off by 1e-3 is caught (rel err {worst:.1e})")
            # a wrong gradient element must be caught
            g_bad = {n: g.numpy().copy() for n, g in g32.items()}
            g_bad["layers.1.wk"][3, 2] += 1e-2 * np.abs(g_bad["layers.1.wk"]).max()
            worst = compare(r64, g64, None, g_bad, 1e-4, out=sink)
            sink.close()
            ok &= check(worst > 1e-4, f"{tag}: a gradient off by 1% of its tensor's max is caught")
            # the command line end to end: config from the batches metadata
            argv = ["--weights", wpath, "--batches", bpath, "--metrics", mpath, "--dtype", "float64"]
            ok &= check(main(argv, quiet=True) == 1, f"{tag}: the command exits 1 on the perturbed metrics")
            with open(mpath, "w") as f:
                for r in r32:
                    f.write(json.dumps(r) + "\n")
            ok &= check(main(argv + ["--tol", "1e-4"], quiet=True) == 0, f"{tag}: and 0 on the float32 metrics")
            ok &= check(main(["--weights", wpath, "--batches", bpath, "--steps", "11"], quiet=True) == 2,
                        f"{tag}: a missing batch is an input error (exit 2)")
    return ok


def selftest():
    print("oracle self-test: model pieces")
    ok = selftest_pieces()
    print("oracle self-test: files and the comparison")
    ok &= selftest_files()
    print("oracle self-test: " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv=None, quiet=False):
    ap = argparse.ArgumentParser(description="PyTorch oracle for plrun (docs/model.md)")
    ap.add_argument("--weights", help="initial weights, safetensors")
    ap.add_argument("--batches", help="token batches, safetensors (step{s}.tokens / step{s}.targets)")
    ap.add_argument("--config", help="model and train settings, JSON or YAML")
    ap.add_argument("--metrics", help="plrun's --metrics JSON-lines file to compare")
    ap.add_argument("--grads", help="plrun's step-0 gradients, safetensors, to compare")
    ap.add_argument("--steps", type=int, help="steps to run (default: the config's)")
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--tol", type=float, default=1e-5, help="largest relative error accepted")
    ap.add_argument("--out-metrics", help="write the oracle's own metrics (JSON lines)")
    ap.add_argument("--out-grads", help="write the oracle's step-0 gradients (safetensors, F32)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    ap.add_argument("--selftest", action="store_true", help="check the oracle itself; needs no input")
    args = ap.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.selftest:
        return selftest()
    stdout = sys.stdout
    try:
        if quiet:
            sys.stdout = open(os.devnull, "w")
        return run(args)
    except OracleInputError as e:
        print(f"oracle: error: {e}", file=sys.stderr if not quiet else sys.stdout)
        return 2
    finally:
        if quiet:
            sys.stdout.close()
            sys.stdout = stdout


if __name__ == "__main__":
    sys.exit(main())
