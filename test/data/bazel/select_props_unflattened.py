#!/usr/bin/python3
"""Writes select_props_unflattened.jsonproto and select_props_unflattened.streamed_jsonproto: what `bazel query
--output=jsonproto` / `--output=streamed_jsonproto` with --noproto:flatten_selects print for the
tests of select_props_unflattened.BUILD. Written by hand from Bazel's source, not captured (Bazel 4,
the one at hand, has no JSON query formats):
- ProtoOutputFormatter.addAttributes: with --noproto:flatten_selects a configurable attribute is
  AttributeMapper.getSelectorList(), which AttributeFormatter.getAttributeProto writes as type
  SELECTOR_LIST and a selector_list: the attribute's own type, then one Selector an element
  ({...} | select() is two, the plain dict one whose single entry is //conditions:default), each
  with its entries in the select()'s order ({label, string_dict_value, is_default_value}, no value
  for None), has_default_value and no_match_error ("" when none was given).
- src/main/protobuf/build.proto: Attribute.SelectorList {type = 1, elements = 2}, Selector
  {entries = 1, has_default_value = 2, no_match_error = 3}, SelectorEntry {label = 1,
  string_dict_value = 8, is_default_value = 16}; Attribute {name = 1, type = 2, string_value = 5,
  string_list_value = 6, string_dict_value = 8, explicitly_specified = 13, nodep = 20,
  selector_list = 21}; Rule {name, rule_class, location, attribute, rule_input}.
- JSONProtoOutputFormatter / StreamedJSONProtoOutputFormatter: protobuf-java's JsonFormat, which
  prints set proto2 fields in field-number order with lowerCamelCase names; see
  json_format.py for the two layouts.
The attributes are cut to those gpuplan reads (name, exec_properties, size, srcs, tags), and
the implicit @bazel_tools rule inputs to two.

usage: select_props_unflattened.py OUT.jsonproto OUT.streamed_jsonproto
"""
import sys

from json_format import write_query_json

IMPLICIT = ["@bazel_tools//tools/test:runtime", "@bazel_tools//tools/test:test_wrapper"]


def dict_value(d):
    return [{"key": k, "value": v} for k, v in d.items()]


def selector(entries, has_default=True):
    """entries: (condition, dict or None) in the select()'s order."""
    out = []
    for label, value in entries:
        entry = {"label": label}
        if value:
            entry["stringDictValue"] = dict_value(value)
        entry["isDefaultValue"] = value is None
        out.append(entry)
    return {"entries": out, "hasDefaultValue": has_default, "noMatchError": ""}


def selected(*selectors):
    return {"name": "exec_properties", "type": "SELECTOR_LIST", "explicitlySpecified": True,
            "selectorList": {"type": "STRING_DICT", "elements": list(selectors)}}


def plain(d):
    attribute = {"name": "exec_properties", "type": "STRING_DICT"}
    if d:
        attribute["stringDictValue"] = dict_value(d)
    attribute["explicitlySpecified"] = bool(d)
    return attribute


def test(name, line, exec_properties, inputs=()):
    attributes = [
        exec_properties,
        {"name": "name", "type": "STRING", "stringValue": name, "explicitlySpecified": True, "nodep": False},
        {"name": "size", "type": "STRING", "stringValue": "medium", "explicitlySpecified": False, "nodep": False},
        {"name": "srcs", "type": "LABEL_LIST", "stringListValue": ["//:pass.sh"], "explicitlySpecified": True,
         "nodep": False},
        {"name": "tags", "type": "STRING_LIST", "explicitlySpecified": False, "nodep": False},
    ]
    return {"type": "RULE", "rule": {
        "name": "//:" + name, "ruleClass": "sh_test", "location": "/tmp/selprops_ws/BUILD:%d:8" % line,
        "attribute": attributes, "ruleInput": sorted(list(inputs) + ["//:pass.sh"]) + IMPLICIT}}


TARGETS = [
    # The branches disagree: 1 GPU or 4.
    test("selected_gpu_test", 4, selected(selector([("//conditions:default", {"gpu": "1"}),
                                                    ("//:cuda_big", {"gpu": "4"})])), ["//:cuda_big"]),
    # They agree on what the test needs (2 GPUs); only the image differs.
    test("selected_same_test", 12, selected(selector([("//:cuda", {"gpu": "2", "container-image": "docker://cuda"}),
                                                      ("//conditions:default",
                                                       {"gpu": "2", "container-image": "docker://base"})])),
         ["//:cuda"]),
    # None: the attribute's default, {}, against 2 GPUs.
    test("selected_none_test", 20, selected(selector([("//:cuda_big", {"gpu": "2"}),
                                                      ("//conditions:default", None)])), ["//:cuda_big"]),
    # {"gpu": "1"} | select(): two selectors.
    test("concat_test", 25, selected(selector([("//conditions:default", {"gpu": "1"})]),
                                     selector([("//:cuda_big", {"gpu": "4"}), ("//conditions:default", {})])),
         ["//:cuda_big"]),
    # No select(): read as ever.
    test("plain_test", 30, plain({"gpu": "1"})),
]


if __name__ == "__main__":
    write_query_json(TARGETS, *sys.argv[1:])
