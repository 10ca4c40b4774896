#!/usr/bin/python3
"""Writes the inputs of README "Performance / History"'s `history suggest` measurement into DIR:
fleet.yaml (40 L4 nodes, 20 A100 80GB nodes), query.xml (N plain GPU tests and eight constructed
cases) and results.csv (10 runs of each, as exec's results records): a test that never touched a
GPU, one near its L4's memory, one whose gpu-mem:40GiB is far above its 5000 MiB, one cached in 6
of its 10 runs, and four sharded ones whose history's shards do not cover them (an 8-shard era of
which shards 4-7 were cached; 2 of 4 shards of a test unsharded now; a shard that touched its GPU;
a shard never measured). `history suggest` should name the first four and none of the others.

usage: suggest_history.py DIR [N]   (default N 20000)
"""
import os
import sys
from xml.sax.saxutils import quoteattr

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "fleet.yaml"), "w") as f:
    f.write("""version: 1
pools:
  - name: l4
    count: 40
    gpu: {model: L4, count: 2, vram: 23034MiB, compute_capability: "8.9"}
    cuda: "12.2"
    topology: pcie
  - name: a100
    count: 20
    gpu: {model: A100-SXM-80GB, count: 4}
    cuda: "12.2"
    topology: pcie
""")
tests = [(f"//pkg{i % 200}:t{i}", ["gpu"], 1) for i in range(n)]
tests += [("//case:never", ["gpu"], 1), ("//case:near", ["gpu", "gpu-mem:16GiB"], 1),
          ("//case:toohigh", ["gpu", "gpu-mem:40GiB"], 1), ("//case:cached", ["gpu"], 1),
          ("//case:resharded", ["gpu"], 4), ("//case:shard3touch", ["gpu"], 4),
          ("//case:shard3cached", ["gpu"], 4), ("//case:unsharded_now", ["gpu"], 1)]
with open(os.path.join(out, "query.xml"), "w") as f:
    f.write('<?xml version="1.1" encoding="UTF-8" standalone="no"?>\n<query version="2">\n')
    for label, tags, shards in tests:
        f.write(f'<rule class="cc_test" location="/x/BUILD:1:1" name={quoteattr(label)}>'
                f'<string name="name" value="{label.split(":")[1]}"/><list name="tags">'
                + "".join(f"<string value={quoteattr(t)}/>" for t in tags) + "</list>"
                '<string name="size" value="small"/>'
                + (f'<int name="shard_count" value="{shards}"/>' if shards > 1 else "") + "</rule>\n")
    f.write("</query>\n")
with open(os.path.join(out, "results.csv"), "w") as f:
    f.write("label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_count\n")
    for run in range(10):
        start = f"2026-11-{run + 1:02d}T10:00:00.000Z"
        for i in range(n):
            f.write(f"//pkg{i % 200}:t{i},,{5 + i % 50}.0,{1000 + i * 37 % 9000},l4-{i % 40},0,{start},0,true,false,\n")
        f.write(f"//case:never,,12.0,,l4-1,0,{start},0,false,,\n")
        f.write(f"//case:near,,30.0,21000,l4-2,1,{start},0,true,false,\n")
        f.write(f"//case:toohigh,,30.0,5000,a100-0,1,{start},0,true,false,\n")
        if run in (2, 5, 8, 9):  # cached in the other runs: no record
            f.write(f"//case:cached,,12.0,,l4-3,0,{start},0,false,,\n")
        for shard in range(4):  # of 8 shards then; 4-7 cached
            f.write(f"//case:resharded,{shard},12.0,,l4-4,0,{start},0,false,,8\n")
        for shard in range(4):
            touched = "true,,4" if shard == 3 else "false,,4"
            f.write(f"//case:shard3touch,{shard},12.0,{3000 if shard == 3 else ''},l4-5,0,{start},0,{touched}\n")
        for shard in range(3):
            f.write(f"//case:shard3cached,{shard},12.0,,l4-6,0,{start},0,false,,4\n")
        for shard in range(2):  # of 4 shards then; 2 and 3 cached
            f.write(f"//case:unsharded_now,{shard},12.0,,l4-7,0,{start},0,false,,4\n")
