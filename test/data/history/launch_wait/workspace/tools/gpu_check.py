"""Shared test body: reports what the test was given."""
import os, sys
def main():
    line = "target=%s shard=%s/%s gpus=%s argv=%s" % (
        os.environ.get("TEST_TARGET", "?"), os.environ.get("TEST_SHARD_INDEX", ""),
        os.environ.get("TEST_TOTAL_SHARDS", ""), os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>"),
        " ".join(sys.argv[1:]))
    print(line)
    log = os.environ.get("ADOPT_LOG")
    if log:
        with open(log, "a") as f:
            f.write(line + "\n")
    if os.environ.get("TEST_SHARD_STATUS_FILE"):
        open(os.environ["TEST_SHARD_STATUS_FILE"], "w").close()
    import time
    time.sleep(float(os.environ.get("ADOPT_SLEEP", "0")))
