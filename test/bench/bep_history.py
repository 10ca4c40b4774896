#!/usr/bin/python3
"""Writes a Build Event Protocol JSON file (--build_event_json_file) of TESTS tests x RUNS runs to
OUT, for README "Performance / History"'s `history show` measurement: each run a testResult event
in the shape Bazel 4 writes it (output files, execution info, both times), each test's last run
followed by its testSummary; 10% of results cached, 1% timed out. Usage: bep_history.py OUT TESTS RUNS
"""
import sys

out, tests, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
config = "2bdbd21eab27a6d89cc37531d1470a6247e917321bca2fed8d220f31e37ba4f2"
with open(out, "w") as f:
    for run in range(1, runs + 1):
        for test in range(tests):
            i = (run - 1) * tests + test
            label = f"//pkg{test % 97}/sub:test_{test}"
            logs = f"file:///bazel/out/testlogs/pkg{test % 97}/sub/test_{test}/run_{run}_of_{runs}"
            f.write(
                f'{{"id":{{"testResult":{{"label":"{label}","run":{run},"shard":1,"attempt":1,'
                f'"configuration":{{"id":"{config}"}}}}}},'
                f'"testResult":{{"testActionOutput":[{{"name":"test.log","uri":"{logs}/test.log"}},'
                f'{{"name":"test.xml","uri":"{logs}/test.xml"}}],'
                f'"testAttemptDurationMillis":"{1000 + i * 7919 % 600000}",'
                f'"status":"{"TIMEOUT" if i % 97 == 0 else "PASSED"}",'
                f'"cachedLocally":{"true" if i % 10 == 0 else "false"},'
                f'"testAttemptStartMillisEpoch":"{1714557600000 + i}",'
                f'"executionInfo":{{"strategy":"linux-sandbox","hostname":"ci-7"}}}}}}\n')
    for test in range(tests):
        label = f"//pkg{test % 97}/sub:test_{test}"
        f.write(f'{{"id":{{"testSummary":{{"label":"{label}","configuration":{{"id":"{config}"}}}}}},'
                f'"testSummary":{{"totalRunCount":{runs},"overallStatus":"PASSED","shardCount":1}}}}\n')
