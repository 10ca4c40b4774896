"""The two layouts of bazel query's JSON outputs, shared by the scripts here that write them.
Both print build.proto Target messages with protobuf-java's JsonFormat: jsonproto
(JSONProtoOutputFormatter) pretty-printed, the Targets back to back with no separator
(bazelbuild/bazel#19583); streamed_jsonproto (StreamedJSONProtoOutputFormatter,
bazelbuild/bazel#18701) with JsonFormat.printer().omittingInsignificantWhitespace(), one Target a
line. See README.md.
"""
import json


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


def write_query_json(targets, jsonproto, streamed):
    """Writes the Targets (dicts in JsonFormat's field order) to JSONPROTO and STREAMED in the two layouts."""
    with open(jsonproto, "w", encoding="utf-8") as f:
        f.write("".join(pretty(t) for t in targets) + "\n")
    with open(streamed, "w", encoding="utf-8") as f:
        f.write("".join(compact(t) + "\n" for t in targets))
