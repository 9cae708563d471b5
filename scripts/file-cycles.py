#!/usr/bin/env python3
"""file-cycles.py: finds files that depend on each other in a cycle.

Usage: scripts/file-cycles.py [--objdir DIR] [FOLDER...]
(FOLDER: top-level source folders to check, default compiler common kernels;
DIR: the objects, default build/obj under the repository.)

Two graphs, each searched for strongly connected components of more than
one file (Tarjan):
- calls: object A -> object B when A references a symbol B defines (`nm`:
  A's undefined symbols against every object's defined ones), so a cycle
  is two .c files calling into each other, directly or around a loop;
- includes: header A -> header B when A has #include "B", so a cycle is
  headers including each other.
Prints each cycle with one symbol or include per edge, and exits 1 when
there is one, 0 when there is none, 2 when the objects are missing."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def components(nodes, edges):
    """strongly connected components with more than one node (iterative Tarjan)"""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def call_graph(objdir, folders):
    objs = []
    for d, _, files in os.walk(objdir):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), objdir)
            name = rel[:-2]  # x.c -> x.o, x.cu -> x.cu.o
            src = [os.path.join(ROOT, name + ext) for ext in ('.c', '')]
            if f.endswith('.o') and rel.split(os.sep)[0] in folders and any(map(os.path.exists, src)):
                objs.append(name)  # an object whose source is gone is stale: not counted
    defined, used = {}, {}
    for o in objs:
        text = subprocess.run(['nm', os.path.join(objdir, o + '.o')], capture_output=True, text=True,
                              check=True).stdout
        used[o] = set()
        for line in text.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRCGS':
                defined[p[2]] = o
            elif len(p) == 2 and p[0] == 'U':
                used[o].add(p[1])
    edges, why = {}, {}
    for o in objs:
        for sym in sorted(used[o]):
            t = defined.get(sym)
            if t and t != o:
                edges.setdefault(o, set()).add(t)
                why.setdefault((o, t), sym)
    return sorted(objs), edges, why


def include_graph(folders):
    headers = []
    for folder in list(folders) + ['include']:
        for d, _, files in os.walk(os.path.join(ROOT, folder)):
            headers += [os.path.relpath(os.path.join(d, f), ROOT) for f in files if f.endswith(('.h', '.cuh'))]
    edges, why = {}, {}
    for h in headers:
        with open(os.path.join(ROOT, h), errors='replace') as f:
            for line in f:
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                for cand in (m.group(1), os.path.join('include', m.group(1)),
                             os.path.join(os.path.dirname(h), m.group(1))):
                    cand = os.path.normpath(cand)
                    if cand in headers and cand != h:
                        edges.setdefault(h, set()).add(cand)
                        why[(h, cand)] = '#include "%s"' % m.group(1)
                        break
    return sorted(headers), edges, why


def main(argv):
    objdir = os.path.join(ROOT, 'build', 'obj')
    if len(argv) >= 2 and argv[0] == '--objdir':
        objdir, argv = argv[1], argv[2:]
    folders = argv or ['compiler', 'common', 'kernels']
    if not os.path.isdir(objdir):
        print('file-cycles: no objects in %s (build first)' % objdir)
        return 2
    found = 0
    for kind, (nodes, edges, why) in (('calls', call_graph(objdir, folders)), ('includes', include_graph(folders))):
        for comp in components(nodes, edges):
            found += 1
            print('cycle (%s): %s' % (kind, ' <-> '.join(comp)))
            for a in comp:
                for b in comp:
                    if b in edges.get(a, ()):
                        print('    %s -> %s: %s' % (a, b, why[(a, b)]))
        print('file-cycles: %d %s checked in %s' % (len(nodes), 'objects' if kind == 'calls' else 'headers',
                                                    ', '.join(folders)))
    print('file-cycles: %d cycle%s' % (found, '' if found == 1 else 's'))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
