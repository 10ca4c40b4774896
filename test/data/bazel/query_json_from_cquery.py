#!/usr/bin/python3
"""Writes the query jsonproto and streamed_jsonproto that Bazel >= 6.4 would print, from a
cquery jsonproto capture of Bazel 4 (which cannot write them itself). Both query formats
print the same build.proto Target messages that cquery puts under results[].target, with
protobuf-java's JsonFormat: jsonproto pretty-printed, the Targets back to back with no
separator (bazelbuild/bazel#19583); streamed_jsonproto with
JsonFormat.printer().omittingInsignificantWhitespace(), one Target a line
(StreamedJSONProtoOutputFormatter, bazelbuild/bazel#18701). See README.md.

usage: query_json_from_cquery.py CQUERY.jsonproto OUT.jsonproto OUT.streamed_jsonproto
"""
import json
import sys


def escape(text):
    """A JSON string as JsonFormat writes it: <, >, &, = and ' as \\u escapes."""
    quoted = json.dumps(text, ensure_ascii=False)
    for c in "<>&='":
        quoted = quoted.replace(c, "\\u%04x" % ord(c))
    return quoted


def compact(value):
    if isinstance(value, dict):
        return "{" + ",".join(escape(k) + ":" + compact(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(compact(v) for v in value) + "]"
    return escape(value) if isinstance(value, str) else json.dumps(value)


def pretty(value, indent=""):
    """JsonFormat's pretty layout: two-space indent, "[{" and "}, {" for lists of objects."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{\n" + indent + "}"
        fields = ",\n".join(inner + escape(k) + ": " + pretty(v, inner) for k, v in value.items())
        return "{\n" + fields + "\n" + indent + "}"
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return "[" + ", ".join(pretty(v, indent) for v in value) + "]"
        return "[" + ", ".join(pretty(v, inner) for v in value) + "]"
    return escape(value) if isinstance(value, str) else json.dumps(value)


def main(source, jsonproto, streamed):
    with open(source, encoding="utf-8") as f:
        targets = [result["target"] for result in json.load(f)["results"]]
    with open(jsonproto, "w", encoding="utf-8") as f:
        f.write("".join(pretty(t) for t in targets) + "\n")
    with open(streamed, "w", encoding="utf-8") as f:
        f.write("".join(compact(t) + "\n" for t in targets))


if __name__ == "__main__":
    main(*sys.argv[1:])
