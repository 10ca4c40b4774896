#!/usr/bin/python3
"""Writes the query jsonproto and streamed_jsonproto that Bazel >= 6.4 would print, from a
cquery jsonproto capture of Bazel 4 (which cannot write them itself). Both query formats
print the same build.proto Target messages that cquery puts under results[].target, in the
layouts of json_format.py. See README.md.

usage: query_json_from_cquery.py CQUERY.jsonproto OUT.jsonproto OUT.streamed_jsonproto
"""
import json
import sys

from json_format import write_query_json


def main(source, jsonproto, streamed):
    with open(source, encoding="utf-8") as f:
        targets = [result["target"] for result in json.load(f)["results"]]
    write_query_json(targets, jsonproto, streamed)


if __name__ == "__main__":
    main(*sys.argv[1:])
