#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tandemctl model on random inputs (a fixed seed, so a failure reproduces):
# 1 to 4 instances with every real-job term, CPU sharing and contention,
# every eviction policy, warm or cold, caches from none to all of the
# dataset. Each must give a grid and a best vector with finite makespans,
# exit 0, and nothing on stderr. Then a committed profile with one to three
# of its values replaced by absurd ones (negative, 1e-300, 1e308, a string,
# null, missing): each is a result with finite makespans or a one-line
# error (exit 1 or 2), never a crash, a hang or "simulation failed". Before feb15a7 about one input in seven with
# CPU sharing failed with "simulation failed (Resource deadlock avoided)".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
N=${MODEL_FUZZ_INPUTS:-500}
ksft_plan 2
if [ ! -x "$T" ] || ! command -v python3 >/dev/null; then
	ksft_skip "model on $N random inputs" "needs $T and python3"
	ksft_skip "model on mutated profiles" "needs $T and python3"
	ksft_finish
fi
out=$(python3 - "$T" "$N" 20261204 <<'PY'
import concurrent.futures, json, math, os, random, subprocess, sys
T, N = sys.argv[1], int(sys.argv[2])
random.seed(int(sys.argv[3]))
inputs = []
for it in range(N):
    a = ["-j", "model", "--dataset-size", f"{random.choice([8, 64, 300, 1000])}M",
         "--bw", ",".join(f"{random.choice([5, 20, 50, 200])}M" for _ in range(random.randint(1, 3))),
         "--cache", f"{random.choice([0, 4, 32, 100, 500, 2000])}M"]
    if random.random() < 0.6:
        a += ["--cpus", str(random.choice([1, 2, 0.5, 4]))]
    if random.random() < 0.3:
        a += ["--cpu-contention", str(random.choice([0.05, 0.3, 1]))]
    if random.random() < 0.3:
        a += ["--evict", random.choice(["lru", "2q", "random"])]
    if random.random() < 0.2:
        a += ["--warm"]
    if random.random() < 0.3:
        a += ["--extents", str(random.choice([64, 200, 1024]))]
    for i in range(random.randint(1, 4)):
        kv = [f"rate={random.choice([1, 10, 40, 100, 400])}M",
              f"epochs={random.choice([0, 1, 2, 3])}",
              f"order={random.choice(['indep', 'same', 'seq'])}", f"seed={i + 1}"]
        for p, k, vals in ((0.6, "cpu", [0.001, 0.02, 0.1, 0.5]), (0.3, "cpu_task", [0.001, 0.01, 0.1]),
                           (0.3, "window", ["1M", "4M", "16M", "64M"]), (0.3, "mem", ["1M", "50M", "400M"]),
                           (0.4, "startup", ["200ms", "1s", "3s"]), (0.3, "startup_cpu", [0.1, 1, 3]),
                           (0.3, "gap", ["50ms", "500ms"]), (0.3, "streams", [1, 2, 3]),
                           (0.3, "exit", ["100ms", "1s"])):
            if random.random() < p:
                kv.append(f"{k}={random.choice(vals)}")
        a += ["--instance", ",".join(kv)]
    inputs.append(a)

def check(a):
    why, p = None, None
    try:
        p = subprocess.run([T] + a, capture_output=True, text=True, timeout=60)
        why = f"exit {p.returncode}" if p.returncode else (p.stderr.strip() and "stderr")
        if not why:
            d = json.loads(p.stdout)
            ms = [g["makespan_s"] for g in d["grid"]] + [d["best"]["makespan_s"]]
            if not all(isinstance(m, (int, float)) and math.isfinite(m) and m >= 0 for m in ms):
                why = "a makespan not finite"
    except subprocess.TimeoutExpired:
        why, p = "over 60 s", None
    except (ValueError, KeyError, TypeError) as e:
        why = f"bad JSON ({e})"
    if why:
        return f"{why}: {p.stderr.strip()[:160] if p else ''} :: tandemctl {' '.join(a)}"

# the inputs are drawn first, in order, so the seed fixes them; run on every CPU
with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
    bad = [b for b in ex.map(check, inputs) if b]
print(len(bad))
for b in bad[:5]:
    print(b)
PY
)
nbad=$(echo "$out" | head -n 1)
echo "$out" | tail -n +2 | sed 's/^/# /'
ksft_check "model on $N random inputs (seed 20261204): all give finite makespans, exit 0, no error" \
	test "$nbad" = 0
prof=$top/bench/realjobs/records/profiles-2026-12-03/prof-three.json
out=$(python3 - "$T" "$prof" 20261204 <<'PY'
import concurrent.futures, copy, json, math, os, random, subprocess, sys, tempfile
T, base = sys.argv[1], json.load(open(sys.argv[2]))
random.seed(int(sys.argv[3]))
leaves = []
def walk(o, p):
    for k, v in (o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()):
        (walk(v, p + [k]) if isinstance(v, (dict, list)) else leaves.append(p + [k]))
walk(base, [])
vals = [-1, 0, 1e308, -1e308, 1e-300, "x", None, True, [], {}, 2 ** 64, 0.5, 1e12]
docs = []
for it in range(300):
    d = copy.deepcopy(base)
    for _ in range(random.randint(1, 3)):
        p = random.choice(leaves)
        o = d
        for k in p[:-1]:
            o = o[k]
        if random.random() < 0.15 and isinstance(o, dict):
            o.pop(p[-1], None)
        else:
            o[p[-1]] = random.choice(vals)
    docs.append(json.dumps(d))

def check(doc):
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(doc); f.flush()
        try:
            r = subprocess.run([T, "-j", "model", "--profile", f.name], capture_output=True,
                               text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return "over 60 s: " + doc[:200]
    if r.returncode == 0:
        g = json.loads(r.stdout)
        if not all(math.isfinite(x["makespan_s"]) for x in g["grid"]):
            return "a makespan not finite"
    elif r.returncode not in (1, 2) or "simulation failed" in r.stderr or \
            len(r.stderr.strip().splitlines()) != 1:
        return f"exit {r.returncode}: {r.stderr.strip()[:160]}"

with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
    bad = [b for b in ex.map(check, docs) if b]
print(len(bad))
for b in bad[:5]:
    print(b)
PY
)
nbad=$(echo "$out" | head -n 1)
echo "$out" | tail -n +2 | sed 's/^/# /'
ksft_check "model on 300 mutated profiles: a result or a one-line error, never 'simulation failed'" \
	test "$nbad" = 0
ksft_finish
