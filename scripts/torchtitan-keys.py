#!/usr/bin/env python3
"""torchtitan-keys.py: lists the configuration fields torchtitan's trainer
accepts in the sections plc export --torchtitan sets, read statically from a
checkout (no torchtitan import).

usage: scripts/torchtitan-keys.py TORCHTITAN_CHECKOUT COMMIT > docs/engines/torchtitan-keys.txt

Lines are `section.field` for the dataclasses of torchtitan/config/configs.py
that Trainer.Config holds (parallelism: ParallelismConfig, training:
TrainingConfig, debug: DebugConfig), and `activation_checkpoint = NAME` for
each policy of torchtitan/distributed/activation_checkpoint.py's
ActivationCheckpointingConfig union (NAME.Config(), or None); then
`name.field` for the configuration objects the exported module reads or
sets by a variable of that name (the objects table: the trainer's config,
its model spec and model, a block, its attention, RoPE, norms, feed-forward
and linears, a mixture of experts with its router and experts, the optimizer, its parameter groups and the LR scheduler)."""
import ast, os, re, sys

root, commit = sys.argv[1], sys.argv[2]
sections = {"parallelism": "ParallelismConfig", "training": "TrainingConfig", "debug": "DebugConfig"}
tree = ast.parse(open(os.path.join(root, "torchtitan/config/configs.py")).read())
keys = []
for n in tree.body:
    if isinstance(n, ast.ClassDef):
        for sec, cls in sections.items():
            if n.name == cls:
                keys += ["%s.%s" % (sec, s.target.id) for s in n.body
                         if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
# the configuration objects the module reads or sets beyond those sections:
# section -> (file, class path); fields of the class and of its bases' Config
# classes in the same file
objects = {
    "config": ("torchtitan/trainer.py", "Trainer.Config"),
    "model_spec": ("torchtitan/protocols/model_spec.py", "ModelSpec"),
    "model": ("torchtitan/models/common/decoder.py", "Decoder.Config"),
    "block": ("torchtitan/models/common/decoder.py", "TransformerBlock.Config"),
    "attention": ("torchtitan/models/common/attention.py", "GQAttention.Config"),
    "rope": ("torchtitan/models/common/rope.py", "RoPE.Config"),
    "norm": ("torchtitan/models/common/nn_modules.py", "RMSNorm.Config"),
    "ffn": ("torchtitan/models/common/feed_forward.py", "FeedForward.Config"),
    "linear": ("torchtitan/models/common/linear.py", "Linear.Config"),
    "moe": ("torchtitan/models/common/moe.py", "MoE.Config"),
    "router": ("torchtitan/models/common/moe.py", "TokenChoiceTopKRouter.Config"),
    "routed": ("torchtitan/models/common/moe.py", "RoutedExperts.Config"),
    "experts": ("torchtitan/models/common/moe.py", "GroupedExperts.Config"),
    "optimizer": ("torchtitan/components/optimizer/optimizer.py", "OptimizersContainer.Config"),
    "param_group": ("torchtitan/components/optimizer/optimizer.py", "ParamGroupConfig"),
    "lr_scheduler": ("torchtitan/components/optimizer/lr_scheduler.py", "LRSchedulersContainer.Config"),
}
def find(body, path):
    for n in body:
        if isinstance(n, ast.ClassDef) and n.name == path[0]:
            return n if len(path) == 1 else find(n.body, path[1:])
    return None
for sec, (f, cls) in objects.items():
    body = ast.parse(open(os.path.join(root, f)).read()).body
    todo, seen = [cls], set()
    while todo:
        c = todo.pop()
        node = find(body, c.split("."))
        if node is None or c in seen:
            continue
        seen.add(c)
        keys += ["%s.%s" % (sec, s.target.id) for s in node.body
                 if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        todo += [ast.unparse(b) for b in node.bases]
ac = open(os.path.join(root, "torchtitan/distributed/activation_checkpoint.py")).read()
union = ac[ac.index("ActivationCheckpointingConfig = ("):]
union = union[:union.index("\n)\n")]
for name in re.findall(r"Annotated\[([A-Za-z_.]+|None),", union):
    keys.append("activation_checkpoint = " + ("None" if name == "None" else name.split(".")[0]))
print("# Configuration fields torchtitan's Trainer.Config accepts (torchtitan/config/configs.py,")
print("# torchtitan/distributed/activation_checkpoint.py, and the classes of the objects table:")
print("# trainer.py, protocols/model_spec.py, models/common/*.py, components/optimizer/*.py),")
print("# pytorch/torchtitan commit %s," % commit)
print("# listed by scripts/torchtitan-keys.py. plc export --torchtitan sets only these (tests/e2e/export.sh).")
for k in dict.fromkeys(keys):
    print(k)
