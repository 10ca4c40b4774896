#!/usr/bin/python3
"""Writes the query jsonproto and streamed_jsonproto that Bazel >= 7 / >= 6.4 would print, from a
`bazel query --output=proto` capture of Bazel 4 (which cannot write JSON itself). --output=proto
writes build.proto's QueryResult ({repeated Target target = 1}); the JSON formats print the same
Target messages with protobuf-java's JsonFormat (see json_format.py and README.md):
set fields in field-number order (the wire order protobuf-java writes), lowerCamelCase names,
enums by name, int32 as numbers, empty repeated fields left out. Decoded here with the field
numbers of src/main/protobuf/build.proto (Target, Rule, Attribute, StringDictEntry, License); a
field this does not know is refused, so nothing is dropped unseen.

usage: query_json_from_proto.py QUERY.proto OUT.jsonproto OUT.streamed_jsonproto
"""
import sys

from json_format import write_query_json

TARGET_TYPES = {1: "RULE", 2: "SOURCE_FILE", 3: "GENERATED_FILE", 4: "PACKAGE_GROUP", 5: "ENVIRONMENT_GROUP"}
ATTRIBUTE_TYPES = {1: "INTEGER", 2: "STRING", 3: "LABEL", 4: "OUTPUT", 5: "STRING_LIST", 6: "LABEL_LIST",
                   7: "OUTPUT_LIST", 8: "DISTRIBUTION_SET", 9: "LICENSE", 10: "STRING_DICT",
                   11: "FILESET_ENTRY_LIST", 12: "LABEL_LIST_DICT", 13: "STRING_LIST_DICT", 14: "BOOLEAN",
                   15: "TRISTATE", 16: "INTEGER_LIST", 17: "STRING_DICT_UNARY", 18: "UNKNOWN",
                   19: "LABEL_DICT_UNARY", 20: "SELECTOR_LIST", 21: "LABEL_KEYED_STRING_DICT"}
TRISTATES = {0: "NO", 1: "YES", 2: "AUTO"}


def varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def fields(data):
    """(field number, value) in wire order: an int for a varint, bytes for a length-delimited field."""
    at, out = 0, []
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 2:
            size, at = varint(data, at)
            value, at = data[at:at + size], at + size
        else:
            raise ValueError("wire type %d of field %d" % (wire, number))
        out.append((number, value))
    return out


def message(data, schema, what):
    """A message as a dict in field order; schema: number -> (json name, decode, repeated)."""
    out = {}
    for number, value in fields(data):
        if number not in schema:
            raise ValueError("%s: field %d is not known here" % (what, number))
        name, decode, repeated = schema[number]
        if repeated:
            out.setdefault(name, []).append(decode(value))
        else:
            out[name] = decode(value)
    return out


def text(value):
    return value.decode("utf-8")


def int32(value):
    return value - (1 << 64) if value >= 1 << 63 else value


ENTRY = {1: ("key", text, False), 2: ("value", text, False)}
LICENSE = {1: ("licenseType", text, True), 2: ("exception", text, True)}
# --noproto:flatten_selects: a select()ed attribute is its Attribute.SelectorList, of Selectors (one a
# select(), `+` joining them), of SelectorEntrys (a condition and its value: the fields of the
# attribute's type, as in Attribute, and none for None). Only the value types met so far.
SELECTOR_ENTRY = {1: ("label", text, False), 6: ("stringListValue", text, True),
                  8: ("stringDictValue", lambda v: message(v, ENTRY, "StringDictEntry"), True),
                  16: ("isDefaultValue", bool, False)}
SELECTOR = {1: ("entries", lambda v: message(v, SELECTOR_ENTRY, "SelectorEntry"), True),
            2: ("hasDefaultValue", bool, False), 3: ("noMatchError", text, False)}
SELECTOR_LIST = {1: ("type", ATTRIBUTE_TYPES.__getitem__, False),
                 2: ("elements", lambda v: message(v, SELECTOR, "Selector"), True)}
ATTRIBUTE = {
    1: ("name", text, False), 2: ("type", ATTRIBUTE_TYPES.__getitem__, False), 3: ("intValue", int32, False),
    5: ("stringValue", text, False), 6: ("stringListValue", text, True),
    7: ("license", lambda v: message(v, LICENSE, "License"), False),
    8: ("stringDictValue", lambda v: message(v, ENTRY, "StringDictEntry"), True),
    13: ("explicitlySpecified", bool, False), 14: ("booleanValue", bool, False),
    15: ("tristateValue", TRISTATES.__getitem__, False), 20: ("nodep", bool, False),
    21: ("selectorList", lambda v: message(v, SELECTOR_LIST, "SelectorList"), False)}
RULE = {1: ("name", text, False), 2: ("ruleClass", text, False), 3: ("location", text, False),
        4: ("attribute", lambda v: message(v, ATTRIBUTE, "Attribute"), True), 5: ("ruleInput", text, True),
        6: ("ruleOutput", text, True), 7: ("defaultSetting", text, True)}
TARGET = {1: ("type", TARGET_TYPES.__getitem__, False), 2: ("rule", lambda v: message(v, RULE, "Rule"), False)}


def main(source, jsonproto, streamed):
    with open(source, "rb") as f:
        targets = [message(value, TARGET, "Target") for number, value in fields(f.read()) if number == 1]
    write_query_json(targets, jsonproto, streamed)


if __name__ == "__main__":
    main(*sys.argv[1:])
