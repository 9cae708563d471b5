#!/usr/bin/env python3
"""torchtitan-keys.py: lists the configuration fields torchtitan's trainer
accepts in the sections plc export --torchtitan sets, read statically from a
checkout (no torchtitan import).

usage: scripts/torchtitan-keys.py TORCHTITAN_CHECKOUT COMMIT > docs/engines/torchtitan-keys.txt

Lines are `section.field` for the dataclasses of torchtitan/config/configs.py
that Trainer.Config holds (parallelism: ParallelismConfig, training:
TrainingConfig, debug: DebugConfig), and `activation_checkpoint = NAME` for
each policy of torchtitan/distributed/activation_checkpoint.py's
ActivationCheckpointingConfig union (NAME.Config(), or None)."""
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
ac = open(os.path.join(root, "torchtitan/distributed/activation_checkpoint.py")).read()
union = ac[ac.index("ActivationCheckpointingConfig = ("):]
union = union[:union.index("\n)\n")]
for name in re.findall(r"Annotated\[([A-Za-z_.]+|None),", union):
    keys.append("activation_checkpoint = " + ("None" if name == "None" else name.split(".")[0]))
print("# Configuration fields torchtitan's Trainer.Config accepts (torchtitan/config/configs.py,")
print("# torchtitan/distributed/activation_checkpoint.py), pytorch/torchtitan commit %s," % commit)
print("# listed by scripts/torchtitan-keys.py. plc export --torchtitan sets only these (tests/e2e/export.sh).")
for k in keys:
    print(k)
