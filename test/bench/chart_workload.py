#!/usr/bin/env python3
"""Writes DIR/query.xml (TESTS py_tests, as commands_bench.cpp's shape() makes them: 97 teams, a
package per 100 tests, one in eight CPU-only, one in 25 sharded four ways) and DIR/fleet.yaml
(NODES nodes of 8 GPUs in commands_bench's four pools), to time `gpuplan render` on a plan of
that size. Usage: chart_workload.py DIR [TESTS=100000] [NODES=1000]"""
import os
import sys

TAG_SETS = [["gpu"], ["gpu:2", "nvlink"], ["requires-gpu-nvidia"], ["gpu", "gpu-mem:40GiB"], ["cpu-only"],
            ["requires-gpu-sm80"], ["gpu:4", "cuda>=12.0"], ["gpu", "team-ml"]]
SIZES = ["small", "medium", "large", "medium", "small"]
POOLS = [
    "  - name: h100\n    count: {}\n    gpu: {{model: H100-SXM-80GB, count: 8}}\n    cuda: \"12.4\"\n"
    "    topology: nvswitch\n",
    "  - name: a100\n    count: {}\n    gpu: {{model: A100-SXM-80GB, count: 8}}\n    cuda: \"12.2\"\n"
    "    topology: {{nvlink_pairs: [[0, 1], [2, 3], [4, 5], [6, 7]]}}\n",
    "  - name: a100-40\n    count: {}\n    gpu: {{model: A100-PCIE-40GB, count: 8}}\n    cuda: \"11.8\"\n"
    "    topology: pcie\n",
    "  - name: l40s\n    count: {}\n    gpu: {{model: L40S, count: 8}}\n    cuda: \"12.4\"\n    topology: pcie\n",
]


def main():
    out = sys.argv[1]
    tests = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    nodes = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "query.xml"), "w", newline="\n") as f:
        f.write('<?xml version="1.1" encoding="UTF-8" standalone="no"?>\n<query version="2">\n')
        for i in range(tests):
            package, name = f"team{i % 97:03}/models/m{i // 100:05}", f"case_{i:07}_test"
            f.write(f'    <rule class="py_test" location="/home/ci/monorepo/{package}/BUILD:{i % 100 * 7 + 1}:8" '
                    f'name="//{package}:{name}">\n        <string name="name" value="{name}"/>\n'
                    '        <list name="tags">\n')
            for tag in TAG_SETS[i % len(TAG_SETS)]:
                f.write(f'            <string value="{tag.replace(">", "&gt;")}"/>\n')
            f.write(f'        </list>\n        <list name="srcs">\n            <label value="//{package}:{name}.py"/>\n'
                    f'        </list>\n        <string name="size" value="{SIZES[i % 5]}"/>\n')
            if i % 25 == 0:
                f.write('        <int name="shard_count" value="4"/>\n')
            f.write(f'        <rule-input name="//{package}:{name}.py"/>\n'
                    f'        <rule-input name="//{package}:lib"/>\n    </rule>\n')
        f.write("</query>\n")
    with open(os.path.join(out, "fleet.yaml"), "w", newline="\n") as f:
        f.write("version: 1\npools:\n")
        for pool in POOLS:
            f.write(pool.format(nodes // 4))


if __name__ == "__main__":
    main()
