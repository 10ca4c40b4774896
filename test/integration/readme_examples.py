#!/usr/bin/python3
"""Runs the README's `$ gpuplan ...` examples that need nothing beyond the repository, and
checks that gpuplan prints what the README shows.

Usage: test/integration/readme_examples.py README.md GPUPLAN   (from the source root)

An example is a fenced block whose lines starting with `$ ` are commands (a line ending in `\\`
goes on on the next), each followed by its output. A command is run only when every file it names
(an argument with a `/` or a file extension, not an option) exists here; the others (`fleet.yaml`,
`broken.json`: the reader's own files) are skipped. Standard output must match the output lines
that do not start with `gpuplan: `, in order; each `gpuplan: ` line must match a line of standard
error. A line `...` or `…` stands for any number of lines, a `…` inside a line for any text.
Prints each mismatch with the README's line; exits 1 if any, or if fewer than MIN_CHECKED ran
(the parser would otherwise pass by finding nothing).
"""
import os
import re
import shlex
import subprocess
import sys

MIN_CHECKED = 6
FILE_ARG = re.compile(r"/|\.(xml|yaml|yml|json|csv|txt|jsonproto)$")


def examples(lines):
    """(line number, command, expected output lines) for each `$ ` command in a fenced block."""
    found, in_block, current = [], False, None
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if current:
                found.append(current)
            in_block, current = not in_block, None
            continue
        if not in_block:
            continue
        if line.startswith("$ "):
            if current:
                found.append(current)
            current = [number, line[2:], []]
        elif current and current[1].endswith("\\") and not current[2]:
            current[1] = current[1][:-1] + " " + line.strip()
        elif current:
            current[2].append(line)
    return found


def runnable(command):
    words = shlex.split(command)
    if not words or words[0] != "gpuplan":
        return False
    return all(os.path.exists(w) for w in words if not w.startswith("-") and FILE_ARG.search(w))


def pattern(line):
    return re.compile("".join(".*" if part == "…" else re.escape(part) for part in re.split("(…)", line.rstrip())))


def matches(expected, actual):
    """Whether the actual lines match the expected ones, `...`/`…` lines standing for any lines."""
    if not expected:
        return not actual
    if expected[0].strip() in ("...", "…"):
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and pattern(expected[0]).fullmatch(actual[0].rstrip()) is not None and matches(
        expected[1:], actual[1:])


def main(readme, gpuplan):
    with open(readme, encoding="utf-8") as f:
        lines = f.read().splitlines()
    failures, checked = 0, 0
    for number, command, expected in examples(lines):
        if not runnable(command):
            continue
        checked += 1
        shell = re.sub(r"(^|\|\s*)gpuplan ", lambda m: m.group(1) + shlex.quote(gpuplan) + " ", command)
        run = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True,
                             env=dict(os.environ, COLUMNS="80"))
        stdout = run.stdout.splitlines()
        stderr = run.stderr.splitlines()
        want_out = [line for line in expected if not line.startswith("gpuplan: ")]
        while want_out and not want_out[-1].strip():
            want_out.pop()
        problems = []
        if not matches(want_out, stdout):
            problems.append("standard output differs:\n" + "\n".join(stdout))
        for line in expected:
            if line.startswith("gpuplan: ") and not any(pattern(line).fullmatch(e) for e in stderr):
                problems.append(f"no line of standard error matches {line!r}:\n" + "\n".join(stderr))
        for problem in problems:
            failures += 1
            print(f"{readme}:{number}: $ {command}\n{problem}\n", file=sys.stderr)
    if checked < MIN_CHECKED:
        print(f"{readme}: only {checked} examples could be run (at least {MIN_CHECKED} expected)", file=sys.stderr)
        return 1
    print(f"{checked} README examples checked, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
