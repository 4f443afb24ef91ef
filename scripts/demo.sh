#!/usr/bin/env bash
# make demo: the main job on its embedded default, in the VM rig (node 1 =
# CPU-less memory standing for CXL, a throttled virtio disk standing for
# remote storage): generate a dataset, calibrate, run two emulated training
# instances with `tandemctl run --stagger auto`, then with simultaneous start;
# print predicted against measured makespans and the sharing counts, and
# write the model's M(delta) plot with the measured points on it.
#
#   scripts/demo.sh [--out DIR]        (default DIR: build/demo)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
B=${B:-build}
T=$top/$B/tandemctl
out=$top/$B/demo
[ "${1:-}" = --out ] && out=$2
. "$top/bench/stagger/lib.sh"
for f in kmod/tandem.ko "$T"; do
	[ -e "$f" ] || { echo "demo: $f missing: run make" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out/run"
# The embedded default: DESIGN.md's testbed (384 MiB node 0 + 256 MiB node 1,
# 1 MiB files, one reader with an 8-deep queue, compute as a sleep per file)
# with the disk at 25 MiB/s, where the emulator's per-page CPU costs under
# TCG stay small next to the I/O (Documentation/validation.md), and two jobs
# that differ: A needs 40 ms per file, B 6 ms. Started together they share
# the disk while A, the long one, is still loading; the model decides how
# long B should wait (the `differ` scenario of bench/stagger).
cat >"$out/params.sh" <<'EOF'
NAME=demo
NODE0=384 NODE1=256 BPS=26214400
NFILES=200 FSIZE_MIB=1
EPOCHS_A=2 STEP_A=40ms STEP_B=6ms ORDER_A=indep SEED_A=1 SEED_B=2
GRID="0"
AUTO=1 REPS=1 WARM=5s SAMPLE=128M
EOF
n=$(pgrep -c qemu-system || true)
[ "${n:-0}" -gt 0 ] && echo "note: $n other VM(s) running on this machine: timings will be slower and noisier"
t0=$(date +%s)
echo "### booting the VM rig (QEMU TCG: node 0 384 MiB + 2 CPUs, node 1 256 MiB without CPUs, disk 25 MiB/s)"
STAGGER_STREAM=1 run_scenario "$out/params.sh" "$out/run" 0 "$top/scripts/demo-vm.sh" \
	"$top/bench/stagger/vm-stagger.sh" || { echo "demo: the VM run failed (log: $out/run/tap.log)" >&2; exit 1; }
scenario_report "$out/run" || exit 1
cp "$out/run/m.svg" "$out/run/m.png" "$out/" 2>/dev/null || true

# the table: one row per schedule
{
	printf '\n%-20s %11s %12s %11s %7s   %-24s %-24s\n' schedule "B released" "predicted M" "measured M" error \
		"A: miss/own/shared MiB" "B: miss/own/shared MiB"
	jq -s -r '
	  def f: if . == null then "-" else (. * 100 | round / 100 | tostring) end;
	  def mib: if . == null then "-" else ((. * 4096 / 1048576 * 10 | round) / 10 | tostring) end;
	  (map(select(.kind == "auto")) + map(select(.kind == "grid" and .x == 0)))[] |
	  [(if .kind == "auto" then "--stagger auto" else "simultaneous start" end), (.x | f) + " s",
	   (.predicted | f) + " s", (.measured | f) + " s",
	   ((((.predicted - .measured) / .measured) * 1000 | round) / 10 | tostring) + "%",
	   "\(.a_miss | mib) / \(.a_own | mib) / \(.a_sh | mib)", "\(.b_miss | mib) / \(.b_own | mib) / \(.b_sh | mib)"] | @tsv
	' "$out/run/rows.jsonl" | while IFS=$'\t' read -r sch x p m e a b; do
		printf '%-20s %11s %12s %11s %7s   %-24s %-24s\n' "$sch" "$x" "$p" "$m" "$e" "$a" "$b"
	done
	echo
	jq -s -r '
	  def f: if . == null then "-" else (. * 100 | round / 100 | tostring) end;
	  (map(select(.kind == "auto")) | first) as $a
	  | (map(select(.kind == "grid" and .x == 0)) | first) as $z
	  | (if $a then "model: best stagger delta* = \($a.search.best_delta_s[1] - $a.search.best_delta_s[0] | f) s, predicted M = \($a.search.best_makespan_s | f) s vs \($a.search.together_makespan_s | f) s together (gain \($a.search.gain * 1000 | round / 10)%): \(if $a.search.together then "start together" else "stagger" end)" else empty end),
	    (if $a and $z then "measured: \($a.measured | f) s with --stagger auto vs \($z.measured | f) s together (\((($a.measured / $z.measured - 1) * 1000 | round) / 10)%)" else empty end)
	' "$out/run/rows.jsonl"
} | tee "$out/table.txt"
echo
echo "calibration: $(grep -a '^# calibrate: .*\(B(1)\|instance [AB]:\|calibration took\|page cache can use\)' "$out/run/notes.txt" | sed 's/^# calibrate: //' | paste -sd';' | sed 's/;/; /g')"
echo "reports (JSON): $out/run/runs.jsonl; profile: $out/run/profile.json"
if [ -s "$out/m.svg" ]; then
	echo "plot of M(delta) with the measured points: $out/m.svg (and $out/m.png)"
else
	echo "plot not written (gnuplot missing?): $(tail -n 1 "$out/run/model.txt")"
fi
echo "demo took $(($(date +%s) - t0)) s"
