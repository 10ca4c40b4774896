#!/usr/bin/python3
"""Validates plan JSON files against schemas/plan.schema.json (JSON Schema 2020-12).

Usage: test/integration/validate_plan.py PLAN.json...   ("-" reads standard input)
Prints every error with its JSON path; exits 1 if any plan is invalid, 0 otherwise.
Any test that produces a plan can call it; it needs Debian's python3-jsonschema (/usr/bin/python3).
"""
import json
import pathlib
import sys

import jsonschema

SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "schemas" / "plan.schema.json"


def main(paths):
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in paths:
        text = sys.stdin.read() if path == "-" else pathlib.Path(path).read_text()
        try:
            plan = json.loads(text)
        except json.JSONDecodeError as error:
            print(f"{path}: not JSON: {error}", file=sys.stderr)
            bad += 1
            continue
        errors = sorted(validator.iter_errors(plan), key=lambda e: list(e.absolute_path))
        for error in errors:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path) or "$"
            print(f"{path}: {where}: {error.message}", file=sys.stderr)
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
