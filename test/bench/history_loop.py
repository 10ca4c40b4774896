#!/usr/bin/python3
"""A CI's feedback loop over weeks, as README "History" has CI run it: each iteration plans with
`gpuplan plan --history history.json`, plays the plan (each node's units in plan order, a unit
starting when the units before it on its GPUs have ended, as `exec` runs them) with durations
drawn from each test's true time, writes the results records `exec --results` writes, and folds
them in with `gpuplan history summarize history.json results_N.csv -o history.json`. A day apart.

The workload: N py_tests (a third each small, medium, large; 8 in 10 on 1 GPU, 1 on 2, 1 on 4; 1
in 25 in 4 shards), a fleet of 6 H100 nodes of 8 and 4 A100 nodes of 4. Events: test "step" takes
3x from iteration 10; test "flaky" takes 20x in 1 run of 10; node a100-1's results file is cut
mid-line at 12 (a crashed node); 20 tests are added at 15; test "renamed" moves to another package
at 18; test "gpu_up" goes from gpu to gpu:2 (0.6x the time, half the memory a GPU) and "gpu_down"
from gpu:2 to gpu (1.7x, twice the memory) at 22; 30 tests are removed at 25; a H100 node leaves
the fleet at 28; at 35 the history of a second pipeline (the same tests, 12 hours later) is merged
in, both ways round (merge_same: the two orders give the same bytes).

Each iteration prints one JSON line: the plan's makespan and lower bound, the played makespan
(real), every 5th `simulate --history`'s static median, p95 and hindsight bound, each command's
CPU seconds and peak RSS (MiB), the history's and results file's bytes, the plan's and history's
SHA-256 (run twice: the same lines), and the watched tests' planned duration, source, vram_mib
and GPUs.

usage: GPUPLAN=build/gpuplan history_loop.py DIR [ITERATIONS [N]]   (default 40 iterations, 600 tests)
       PLAN_EXTRA='--policy pack' SUMMARIZE_EXTRA='--max-age 7' ... (more options for the two commands)
       APPEND=1 ...: every run appends its records to one results_all.csv, which summarize reads whole
"""
import datetime, hashlib, json, math, os, random, shutil, subprocess, sys, time

GP = os.path.abspath(os.environ.get("GPUPLAN", "build/gpuplan"))
OUT = sys.argv[1]
ITERS = int(sys.argv[2]) if len(sys.argv) > 2 else 40
NTESTS = int(sys.argv[3]) if len(sys.argv) > 3 else 600
SEED = int(os.environ.get("SEED", "1"))
EXTRA = os.environ.get("PLAN_EXTRA", "").split()
SUM_EXTRA = os.environ.get("SUMMARIZE_EXTRA", "").split()
os.makedirs(OUT, exist_ok=True)
os.chdir(OUT)  # the plan names its inputs: the same relative paths in every run
OUT = "."
rng = random.Random(SEED)

SIZES = ["small", "medium", "large"]
tests = {}
for i in range(NTESTS):
    pkg = f"//team{i % 7}/pkg{i % 37}"
    name = f"t{i}_test"
    size = SIZES[i % 3]
    gpus = 1 if i % 10 < 8 else (2 if i % 10 == 8 else 4)
    shards = 4 if i % 25 == 3 else 1
    base = {"small": 20, "medium": 120, "large": 600}[size] * math.exp(rng.gauss(0, 0.6))
    peak = int(2000 + rng.random() * 20000)
    tests[f"{pkg}:{name}"] = dict(size=size, gpus=gpus, shards=shards, base=base, peak=peak, flaky=False)

labels = sorted(tests)
ones = [l for l in labels if tests[l]["gpus"] == 1 and tests[l]["shards"] == 1]
STEP, FLAKY, RENAMED, GPU_UP = ones[5], ones[6], ones[7], ones[8]
GPU_DOWN = [l for l in labels if tests[l]["gpus"] == 2 and tests[l]["shards"] == 1][0]  # 2 -> 1 GPU at 22
for l in (STEP, FLAKY, RENAMED, GPU_UP, GPU_DOWN):
    tests[l]["size"] = "medium"
tests[FLAKY]["flaky"] = True
WATCH = {"step": STEP, "flaky": FLAKY, "renamed": RENAMED, "gpu_up": GPU_UP, "gpu_down": GPU_DOWN}

NODES_GONE_AT = 28


def fleet_yaml(it):
    h100 = 6 if it < NODES_GONE_AT else 5
    return f"""version: 1
pools:
  - name: h100
    count: {h100}
    gpu: {{model: H100-SXM-80GB, count: 8}}
    cuda: "12.4"
    topology: nvswitch
  - name: a100
    count: 4
    gpu: {{model: A100-SXM-80GB, count: 4}}
    cuda: "12.2"
    topology: {{nvlink_pairs: [[0, 1], [2, 3]]}}
"""


def query_xml(it):
    rows = ['<?xml version="1.1" encoding="UTF-8" standalone="no"?>', '<query version="2">']
    for label in sorted(tests):
        t = tests[label]
        name = label.split(":")[1]
        rows.append(f'    <rule class="py_test" location="/w/BUILD:1:1" name="{label}">')
        rows.append(f'        <string name="name" value="{name}"/>')
        tag = "gpu" if t["gpus"] == 1 else f"gpu:{t['gpus']}"
        rows.append(f'        <list name="tags">\n            <string value="{tag}"/>\n        </list>')
        rows.append(f'        <string name="size" value="{t["size"]}"/>')
        if t["shards"] > 1:
            rows.append(f'        <int name="shard_count" value="{t["shards"]}"/>')
        rows.append("    </rule>")
    rows.append("</query>")
    return "\n".join(rows) + "\n"


def run(cmd, stdin=None, ok=(0, 3)):
    t0 = time.time()
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S %M"] + cmd, capture_output=True, text=True,
                       stdin=stdin)
    wall = time.time() - t0
    lines = p.stderr.splitlines()
    tl = [l for l in lines if l.startswith("TIME ")][-1].split()
    if p.returncode not in ok:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"{cmd} exit {p.returncode}")
    return dict(stdout=p.stdout, rc=p.returncode, cpu=float(tl[1]) + float(tl[2]), rss_mib=int(tl[3]) / 1024, wall=wall,
                stderr=[l for l in lines if not l.startswith("TIME ")])


def true_duration(label, t, it, r, shard_count):
    d = t["base"] / max(1, shard_count)
    if label == STEP and it >= 10:
        d *= 3
    if t["flaky"] and r.random() < 0.1:
        d *= 20
    if t.get("gpu_factor"):
        d *= t["gpu_factor"]
    return d * math.exp(r.gauss(0, 0.05))


def simulate_run(plan, it, r, base_ms):
    """Returns results records (dicts) and the real makespan, executing each node's list in plan
    order, a unit starting when the units before it on its GPUs have ended (exec's rule)."""
    per_node = {}
    for a in plan["assignments"]:
        per_node.setdefault(a["node"], []).append(a)
    records, makespan = [], 0.0
    for node in sorted(per_node):
        free = {}
        for a in sorted(per_node[node], key=lambda a: (a["start_s"], a["unit"])):
            t = tests[a["label"]]
            start = max([free.get(g, 0.0) for g in a["gpus"]] + [0.0])
            d = true_duration(a["label"], t, it, r, a["shard_count"])
            end = start + d
            for g in a["gpus"]:
                free[g] = end
            makespan = max(makespan, end)
            ms = base_ms + int(start * 1000)
            iso = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
            peak = t["peak"] * t.get("mem_factor", 1.0)
            records.append(dict(label=a["label"], shard="" if a["shard_index"] is None else a["shard_index"],
                                seconds=f"{d:.3f}", peak=str(int(peak)), node=node,
                                gpus=",".join(str(g) for g in a["gpus"]), start=iso, exit="0",
                                touched="true", upfront="false",
                                sc="" if a["shard_count"] == 1 else a["shard_count"], filtered="",
                                _order=(ms, node)))
    return records, makespan


HEADER = "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_count,filtered"


def write_results(path, records, crash_node=None):
    with open(path, "w") as f:
        f.write(HEADER + "\n")
        crash_rows = []
        for rec in records:
            g = rec["gpus"]
            if "," in g:
                g = f'"{g}"'
            row = ",".join(str(x) for x in [rec["label"], rec["shard"], rec["seconds"], rec["peak"], rec["node"], g,
                                            rec["start"], rec["exit"], rec["touched"], rec["upfront"], rec["sc"],
                                            rec["filtered"]])
            if rec["node"] == crash_node:
                crash_rows.append(row)
                continue
            f.write(row + "\n")
        if crash_rows:  # the crashed node's records last, the final one cut mid-line
            for row in crash_rows[:-1]:
                f.write(row + "\n")
            f.write(crash_rows[-1][: len(crash_rows[-1]) // 2])


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()[:12]


def main():
    hist = os.path.join(OUT, "history.json")
    hist_b = os.path.join(OUT, "history_b.json")
    rb = random.Random(SEED + 1000)
    log = []
    base_day = int(datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc).timestamp() * 1000)
    added = 0
    for it in range(ITERS):
        # events
        if it == 15:
            for k in range(20):
                tests[f"//team9/new:n{k}_test"] = dict(size=SIZES[k % 3], gpus=1, shards=1,
                                                      base={"small": 20, "medium": 120, "large": 600}[SIZES[k % 3]],
                                                      peak=5000, flaky=False)
        if it == 18:
            t = tests.pop(RENAMED)
            new = "//moved/place:" + RENAMED.split(":")[1]
            tests[new] = t
            WATCH["renamed"] = new
        if it == 22:
            tests[GPU_UP]["gpus"] = 2
            tests[GPU_UP]["gpu_factor"] = 0.6
            tests[GPU_UP]["mem_factor"] = 0.5
            tests[GPU_DOWN]["gpus"] = 1
            tests[GPU_DOWN]["gpu_factor"] = 1.7
            tests[GPU_DOWN]["mem_factor"] = 2.0
        if it == 25:
            for l in sorted(tests)[100:130]:
                if l not in WATCH.values():
                    tests.pop(l)
        q = os.path.join(OUT, "query.xml")
        fl = os.path.join(OUT, "fleet.yaml")
        open(q, "w").write(query_xml(it))
        open(fl, "w").write(fleet_yaml(it))
        plan = os.path.join(OUT, "plan.json")
        cmd = [GP, "plan", "--fleet", fl, q, "-o", plan] + EXTRA
        if os.path.exists(hist):
            cmd += ["--history", hist]
        pr = run(cmd)
        open(os.path.join(OUT, f"plan_{it:03d}.err"), "w").write("\n".join(pr["stderr"]) + "\n")
        shutil.copy(plan, os.path.join(OUT, f"plan_{it:03d}.json"))
        P = json.load(open(plan))
        est = {}
        for name, l in WATCH.items():
            units = [a for a in P["assignments"] if a["label"] == l]
            est[name] = [(round(a["duration_s"], 1), a["duration_source"], a.get("vram_mib"),
                          a["requirements"]["gpus"]) for a in units][:1]
        base_ms = base_day + it * 86400_000
        records, real = simulate_run(P, it, random.Random(SEED * 7919 + it), base_ms)
        res = os.path.join(OUT, f"results_{it:03d}.csv")
        write_results(res, records, crash_node="a100-1" if it == 12 else None)
        if os.environ.get("APPEND"):  # one results file that every run appends to, as --results does
            body = open(res).read().split("\n", 1)[1]
            allp = "results_all.csv"
            if not os.path.exists(allp):
                open(allp, "w").write(HEADER + "\n")
            cur = open(allp).read()
            with open(allp, "a") as f:
                if not cur.endswith("\n"):
                    f.write("\n")
                f.write(body)
            res = allp
        sr = run([GP, "history", "summarize", hist, res, "-o", hist] + SUM_EXTRA)
        # pipeline B: the same tests run nightly by another pipeline with its own history
        recs_b, _ = simulate_run(P, it, random.Random(SEED * 104729 + it), base_ms + 12 * 3600_000)
        res_b = os.path.join(OUT, f"results_b_{it:03d}.csv")
        write_results(res_b, recs_b)
        run([GP, "history", "summarize", hist_b, res_b, "-o", hist_b])
        if it == 35:
            mr = run([GP, "history", "summarize", hist, hist_b, "-o", hist + ".merged"])
            run([GP, "history", "summarize", hist_b, hist, "-o", hist + ".merged_ba"])
            log.append(dict(merge_same=sha(hist + ".merged") == sha(hist + ".merged_ba")))
            os.replace(hist + ".merged", hist)
        sim = None
        if it % 5 == 4:
            sp = run([GP, "simulate", plan, "--fleet", fl, "--history", hist, "--json", "--runs", "20", "--seed", "1"])
            sj = json.loads(sp["stdout"])
            sim = dict(static=round(sj["static"]["median"]), p95=round(sj["static"]["p95"]),
                       bound=round(sj["hindsight_bound_median"]))
        row = dict(it=it, units=P["summary"]["gpu_units"], makespan=round(P["summary"]["makespan_s"]),
                   lb=round(P["summary"]["lower_bound_s"]), real=round(real), sim=sim,
                   plan_cpu=round(pr["cpu"], 2), plan_rss=round(pr["rss_mib"]), sum_cpu=round(sr["cpu"], 2),
                   sum_rss=round(sr["rss_mib"]), hist_bytes=os.path.getsize(hist),
                   res_bytes=os.path.getsize(res), plan_sha=sha(plan), hist_sha=sha(hist), est=est,
                   plan_totals=[l for l in pr["stderr"] if "gpuplan:" in l and ("warning" in l or "history" in l)][-3:],
                   plan_warn=[l for l in pr["stderr"] if any(w in l for w in WATCH.values())][:4],
                   sum_totals=sr["stderr"][-1:])
        log.append(row)
        print(json.dumps(row), flush=True)
    json.dump(log, open(os.path.join(OUT, "log.json"), "w"), indent=1)


main()
