"""file_circles.py: no two files of lib/ call each other (issue 9).

Usage: file_circles.py ARCHIVE [TABLE_OBJECT...]

Reads the static library's symbol table (nm -A), draws an edge from each
object file to every other object file defining a symbol it uses, and
prints every strongly connected set of more than one file with the
symbols that tie it, exit 1 when there is one.  The operator table's
object (ops, given as TABLE_OBJECT) names every rule and kernel by address
as data, not as calls: its outgoing edges are left out, so the table does
not make every pass and kernel one circle.  An inline fast path calling its
own slow path stays inside one file and is not an edge.
"""
import collections
import re
import subprocess
import sys


def main():
    ar = sys.argv[1]
    table = set(sys.argv[2:])
    out = subprocess.run(["nm", "-A", ar], capture_output=True, text=True,
                         check=True).stdout
    defs = {}
    undef = collections.defaultdict(set)
    for line in out.splitlines():
        m = re.match(r"^[^:]+:([^:]+\.o):\s*[0-9a-f]*\s+(\S)\s+(\S+)$", line)
        if not m:
            continue
        obj, kind, sym = m.groups()
        f = re.sub(r"^lib[a-z_]*_la-", "", obj)[:-2]
        if kind == "U":
            undef[f].add(sym)
        elif kind in "TDBRC":
            defs[sym] = f
    if len(defs) < 50:
        print("file_circles: only %d symbols read from %s" % (len(defs), ar))
        return 2
    edges = collections.defaultdict(set)
    for f, syms in undef.items():
        if f in table:
            continue
        for s in syms:
            g = defs.get(s)
            if g and g != f:
                edges[f].add((g, s))
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w, _ in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(100000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        print("FAIL: files calling each other: " + " ".join(comp))
        cs = set(comp)
        for f in comp:
            for g, s in sorted(edges[f]):
                if g in cs:
                    print("    %s -> %s (%s)" % (f, g, s))
    return 1 if sccs else 0


if __name__ == "__main__":
    sys.exit(main())
