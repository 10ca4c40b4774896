#!/usr/bin/env python3
"""Fails when a stage's library calls a function that only a stage it may not use defines.

Usage: check_layering.py NM STAGE=LIBRARY=USES...   (USES: the stages it may use, comma-separated)

The static libraries of the stages (CMakeLists.txt, GPUPLAN_STAGES) would link even when one
called a later stage, because the program links them all; this reads their symbol tables
instead. A symbol counts as a stage's when one of its objects defines it strongly (inline
functions and templates, defined weakly wherever they are used, belong to no stage). A stage
may use its own symbols and those of the stages it may use, directly or through them.
"""
import subprocess
import sys


def symbols(nm, library):
    """(defined, undefined): strong definitions → object, undefined references → objects."""
    out = subprocess.run([nm, "-A", "-g", library], capture_output=True, text=True, check=True).stdout
    defined, undefined = {}, {}
    for line in out.splitlines():
        fields = line.split()  # "LIBRARY:OBJECT:ADDRESS KIND NAME", no ADDRESS when undefined
        if len(fields) < 2 or not fields[0].startswith(library + ":"):
            continue
        kind, name = fields[-2], fields[-1]
        obj = fields[0][len(library) + 1:].split(":")[0]
        if kind == "U":
            undefined.setdefault(name, set()).add(obj)
        elif kind in "TDBR":
            defined[name] = obj
    return defined, undefined


def main():
    nm, specs = sys.argv[1], sys.argv[2:]
    uses, libraries = {}, {}
    for spec in specs:
        stage, library, allowed = spec.split("=")
        libraries[stage] = library
        uses[stage] = [s for s in allowed.split(",") if s]
    closure = {}
    for stage in uses:  # in order: a stage's uses come before it
        closure[stage] = {stage}.union(*(closure[u] for u in uses[stage]))
    owner, wanted = {}, {}
    for stage, library in libraries.items():
        defined, undefined = symbols(nm, library)
        for name in defined:
            owner.setdefault(name, stage)
        wanted[stage] = undefined
    problems = []
    for stage, undefined in wanted.items():
        for name, objects in undefined.items():
            other = owner.get(name)
            if other is not None and other not in closure[stage]:
                problems.append((stage, other, sorted(objects)[0], name))
    if not problems:
        return 0
    problems.sort()
    names = subprocess.run(["c++filt"], input="\n".join(p[3] for p in problems), capture_output=True,
                           text=True).stdout.splitlines()
    for (stage, other, obj, name), readable in zip(problems, names or [p[3] for p in problems]):
        print(f"layering: src/{stage}/{obj.removesuffix('.o')} uses {other}'s {readable or name}, "
              f"but {stage} may use only: {', '.join(uses[stage]) or 'nothing'} (CMakeLists.txt GPUPLAN_STAGES)",
              file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
