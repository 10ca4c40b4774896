#!/usr/bin/env python3
"""Writes a `bazel query --output=xml` document of N generated sh_tests tagged `gpu` (//big:tNNNNNN),
with examples/query.xml's //ml:inference_test among them, halfway: the query README's run-under
--query launch was timed on (N = 100000: 31 MB).

usage: python3 test/bench/one_tag_query.py examples/query.xml 100000 > big.xml
"""
import re
import sys

example, count = sys.argv[1], int(sys.argv[2])
inference = re.search(r'    <rule class="sh_test"[^>]*name="//ml:inference_test">.*?\n    </rule>\n',
                      open(example, encoding="utf-8").read(), re.S).group(0)
out = sys.stdout
out.write('<?xml version="1.1" encoding="UTF-8" standalone="no"?>\n<query version="2">\n')
for i in range(count):
    if i == count // 2:
        out.write(inference)
    out.write(f'''    <rule class="sh_test" location="/w/big/BUILD:{i + 1}:8" name="//big:t{i:06d}">
        <string name="name" value="t{i:06d}"/>
        <list name="tags">
            <string value="gpu"/>
        </list>
        <string name="size" value="small"/>
        <rule-input name="//tools:gpu_probe.sh"/>
    </rule>
''')
out.write('</query>\n')
