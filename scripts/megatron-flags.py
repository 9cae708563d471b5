#!/usr/bin/env python3
"""megatron-flags.py: lists the command-line flags Megatron-LM accepts, read
statically from a checkout (no Megatron import: it needs GPU libraries).

usage: scripts/megatron-flags.py MEGATRON_CHECKOUT "COMMIT (tag TAG)" > docs/engines/megatron-core-X.Y-flags.txt

Flags come from two places in megatron/training/arguments.py: literal
add_argument('--flag', ...) calls, and ArgumentGroupFactory(ConfigClass,
exclude=[...]) groups, which turn every dataclass field (bases included) into
--field-name, or --no-field-name / --disable-field-name for a bool whose
default is True (megatron/training/argument_utils.py). plc export --megatron
may only emit flags on this list; tests/e2e/export.sh checks that."""
import ast, os, re, sys

root, commit = sys.argv[1], sys.argv[2]
args_py = os.path.join(root, "megatron/training/arguments.py")
src = open(args_py).read()
tree = ast.parse(src)
flags = set(re.findall(r"""['"](--[a-z0-9][a-z0-9-]*)['"]""", src))

# every class defined under megatron/, by name, for the factory groups
classes = {}
for d, _, files in os.walk(os.path.join(root, "megatron")):
    for f in files:
        if not f.endswith(".py"):
            continue
        try:
            t = ast.parse(open(os.path.join(d, f)).read())
        except SyntaxError:
            continue
        for n in t.body:
            if isinstance(n, ast.ClassDef):
                classes.setdefault(n.name, []).append(n)

def fields(name, seen=()):
    out = {}
    for cls in classes.get(name, []):
        for b in cls.bases:
            if isinstance(b, ast.Name) and b.id not in seen:
                out.update(fields(b.id, seen + (name,)))
        for s in cls.body:
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                ann = ast.unparse(s.annotation)
                default = ast.unparse(s.value) if s.value is not None else ""
                if "field(" in default and "init=False" in default:
                    continue
                names = re.search(r"""['"]arg_names['"]\s*:\s*\[([^\]]*)\]""", default)
                out[s.target.id] = (ann, default, re.findall(r"""['"](--[^'"]+)['"]""", names.group(1)) if names else [])
    return out

def const_list(node, env):
    if isinstance(node, ast.List):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)]
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    return []

for fn in ast.walk(tree):
    if not isinstance(fn, ast.FunctionDef):
        continue
    env = {}
    for s in ast.walk(fn):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and isinstance(s.value, ast.List):
            env[s.targets[0].id] = const_list(s.value, env)
    for c in ast.walk(fn):
        if isinstance(c, ast.Call) and getattr(c.func, "id", "") == "ArgumentGroupFactory" and c.args:
            cls = ast.unparse(c.args[0])
            exclude = []
            for k in c.keywords:
                if k.arg == "exclude":
                    exclude = const_list(k.value, env)
            for name, (ann, default, names) in fields(cls).items():
                if name in exclude or name.startswith("_"):
                    continue
                if names:  # metadata argparse_meta arg_names replaces the derived names
                    flags.update(names)
                    continue
                dash = name.replace("_", "-")
                if ann == "bool" and (default.startswith("True") or "default=True" in default):
                    flags.update({"--no-" + dash, "--disable-" + dash})
                else:
                    flags.add("--" + dash)

print("# Command-line flags Megatron-LM accepts (megatron/training/arguments.py),")
print("# NVIDIA/Megatron-LM commit %s, listed by scripts/megatron-flags.py" % commit)
print("# from that commit's tree (git archive TAG megatron | tar -x; scripts/megatron-flags.py DIR \"COMMIT (tag TAG)\"):")
print("# literal add_argument flags plus the ArgumentGroupFactory dataclass fields.")
print("# plc export --megatron emits only flags on this list for the profile of that release (tests/e2e/export.sh).")
for f in sorted(flags):
    print(f)
