#!/bin/sh
cat > "$XML_OUTPUT_FILE" <<X
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" disabled="0" errors="0" time="0.5" timestamp="2026-12-05T23:00:00" name="AllTests">
  <testsuite name="Gemm" tests="1" failures="0" disabled="0" skipped="0" errors="0" time="0.5" timestamp="2026-12-05T23:00:00">
    <testcase name="Fp16" status="run" result="completed" time="0.5" timestamp="2026-12-05T23:00:00" classname="Gemm" />
  </testsuite>
</testsuites>
X
kill -ABRT $$
