#!/usr/bin/env python3
"""Import cycles between the top-level modules of a Rust source folder (default src/server), read from `crate::` and
`super::` paths in non-test code. Prints each cycle (strongly connected group) and exits 1 if any remains once the
modules named with --root (composition roots that may import everything) are left out as targets. Run from the
repository's root; scripts/test.sh runs it for src/server, src/runtime and src/app (ARCHITECTURE.md, "Architecture
invariants")."""
import os, re, sys, argparse
ap = argparse.ArgumentParser(); ap.add_argument("--dir", default="src/server"); ap.add_argument("--root", action="append", default=[])
a = ap.parse_args()
base = a.dir.rstrip("/"); crate_prefix = "crate::" + "::".join(base.split("/")[1:])  # src/server -> crate::server
# Run from the wrong folder, the walk would find nothing and report no cycle.
if not os.path.isdir(base): sys.exit(f"modcycles: {base} is not a folder (run from the repository's root)")
mods = {}
for dp, _, fs in os.walk(base):
    for f in fs:
        if not f.endswith(".rs"): continue
        p = os.path.join(dp, f); rel = os.path.relpath(p, base)
        if rel in ("mod.rs",): continue
        top = rel.split(os.sep)[0].removesuffix(".rs")
        if "tests" in rel.split(os.sep) or f in ("tests.rs",) or f.endswith("_tests.rs"): continue
        mods.setdefault(top, []).append(p)
names = set(mods)
edges = {m: set() for m in names}
for m, files in mods.items():
    for p in files:
        src = open(p, encoding="utf-8", errors="replace").read()
        src = re.split(r"#\[cfg\(test\)\]\s*mod tests", src)[0]
        src = re.sub(r"//[^\n]*", "", src)
        for t in re.findall(re.escape(crate_prefix) + r"::(\w+)", src):
            if t in names and t != m: edges[m].add(t)
        # super:: from a file directly in base refers to the parent (outside); from deeper files to siblings inside m.
        depth = len(os.path.relpath(p, base).split(os.sep))
        if depth == 1:
            for t in re.findall(r"\bsuper::(\w+)", src):
                if t in names and t != m: edges[m].add(t)
        # `use crate::server::{a, b::c}` groups
        for grp in re.findall(re.escape(crate_prefix) + r"::\{([^}]*)\}", src):
            for t in re.findall(r"(?:^|,)\s*(\w+)", grp):
                if t in names and t != m: edges[m].add(t)
roots = set(a.root)
g = {m: {t for t in ts if t not in roots} for m, ts in edges.items() if m not in roots}
idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in g.get(v, ()):
        if w not in g: continue
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: out.append(sorted(comp))
for v in sorted(g):
    if v not in idx: sc(v)
for comp in out:
    ties = [f"{x}->{y}" for x in comp for y in sorted(g[x]) if y in comp]
    print("cycle: " + ", ".join(comp) + "   (" + " ".join(ties) + ")")
print(f"{len(out)} cycle(s) among {len(g)} modules of {base}" + (f" (roots left out: {', '.join(sorted(roots))})" if roots else ""))
sys.exit(1 if out else 0)
