#!/usr/bin/env python3
"""Writes a query of N generated sh_tests tagged `gpu` (//big:tNNNNNN), with the example workspace's
//ml:inference_test among them, halfway: the query README's run-under --query launch was timed on.
From examples/query.xml, a `bazel query --output=xml` document (N = 100000: 31 MB); from
test/data/bazel/tests.streamed_jsonproto, `--output=streamed_jsonproto`, one Target a line, each
generated one with the attributes of the XML's (N = 100000: 45 MB).

usage: python3 test/bench/one_tag_query.py examples/query.xml 100000 > big.xml
       python3 test/bench/one_tag_query.py test/data/bazel/tests.streamed_jsonproto 100000 > big.json
"""
import re
import sys

example, count = sys.argv[1], int(sys.argv[2])
text = open(example, encoding="utf-8").read()
out = sys.stdout


def attribute(name, kind, value):
    return (f'{{"name":"{name}","type":"{kind}","{"stringListValue" if kind == "STRING_LIST" else "stringValue"}":'
            f'{value},"explicitlySpecified":true,"nodep":false}}')


if example.endswith(".streamed_jsonproto"):
    inference = re.search(r'^\{"type":"RULE","rule":\{"name":"//ml:inference_test".*\n', text, re.M).group(0)
    for i in range(count):
        if i == count // 2:
            out.write(inference)
        attributes = ",".join([attribute("name", "STRING", f'"t{i:06d}"'),
                               attribute("tags", "STRING_LIST", '["gpu"]'),
                               attribute("size", "STRING", '"small"')])
        out.write(f'{{"type":"RULE","rule":{{"name":"//big:t{i:06d}","ruleClass":"sh_test",'
                  f'"location":"/w/big/BUILD:{i + 1}:8","attribute":[{attributes}],'
                  f'"ruleInput":["//tools:gpu_probe.sh"]}}}}\n')
    sys.exit(0)

inference = re.search(r'    <rule class="sh_test"[^>]*name="//ml:inference_test">.*?\n    </rule>\n', text,
                      re.S).group(0)
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
