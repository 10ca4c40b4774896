#!/usr/bin/env bash
# The README's example outputs that need only the repository (`$ gpuplan targets examples/query.xml`,
# classify, audit, fleet check, show, compare) are what gpuplan prints: users copy these commands and
# trust what the README says they print. readme_examples.py says how blocks are read and matched.
source test/integration/lib.sh
requires python3 jq

python3 test/integration/readme_examples.py README.md "$GPUPLAN" ||
  fail "README examples differ from what gpuplan prints (above); update the README or the code"
