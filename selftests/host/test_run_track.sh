#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tandemctl run wired to the tracker on the host kernel (root, BPF): every
# instance is a tracker job from before its exec, the report's misses / own
# hits / shared hits against the dataset's size (stat) and what fincore sees
# cached, progress:F released on the tracker's per-job counters (checked
# against what fincore sees cached at the release), the read_bytes
# fallback without the tracker, and the pages a job evicted (it dropped what
# it read). tandem.ko cannot load here: the residency comes from the
# mincore/move_pages scan and is checked against fincore.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
T=${TANDEMCTL:-$top/${B:-build}/tandemctl}
N=19
ksft_plan $N
skip_all() { ksft_skip_rest "run+tracker" "$1"; }
[ -x "$T" ] && command -v jq >/dev/null && command -v fincore >/dev/null ||
	skip_all "needs $T, jq and fincore"
[ "$(id -u)" = 0 ] || skip_all "needs root (BPF)"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs /sys/kernel/btf/vmlinux"
# a private pin directory: never disturb a tracker in use
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-test-run-$$
tmp=$(mktemp -d /var/tmp/tandem-runtrk-XXXXXX)	# not tmpfs: pages come from storage
trap '"$T" tracker unload >/dev/null 2>&1; rm -rf "$tmp"' EXIT
ds=$tmp/ds
"$T" loadgen gen "$ds" --files 32 --size 1M:uniform --seed 3 >/dev/null || { ksft_diag "gen failed"; exit 1; }
# ground truth from outside tandemctl: the files' sizes in 4 KiB pages
P=$(stat -c %s "$ds"/* | awk '{ p += int(($1 + 4095) / 4096) } END { print p }')
ksft_diag "dataset: 32 files, $P pages"
cold() { for f in "$ds"/*; do dd if="$f" iflag=nocache count=0 status=none; done; }
cached() { fincore -b -n -o PAGES "$ds"/* | awk '{ p += $1 } END { print p + 0 }'; }
# within(GOT, WANT, PCT): |GOT - WANT| <= PCT% of WANT (+2 pages)
within() { awk -v g="$1" -v w="$2" -v p="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * p / 100 + 2) }'; }
LG="$T loadgen $ds --epochs 2"

# 1-5: B released after A ended: A loads every page and re-reads its own, B only shares
cold
c0=$(cached)
"$T" run --dataset "$ds" --stagger 2 --report "$tmp/r1.json" -- \
	$LG --order seq ::: $LG --order seq >/dev/null 2>&1
rc=$?
q() { jq -r "$1" "$tmp/r1.json"; }
ksft_diag "cold before: $c0 pages; A: $(q '.instances[0] | "\(.misses) \(.own_hits) \(.shared_hits) end \(.end_s)"'); B: $(q '.instances[1] | "\(.misses) \(.own_hits) \(.shared_hits) start \(.start_s)"')"
ksft_check "sequential: run ok, dataset cold before, B started after A ended, tracker loaded by the run" \
	test $rc -eq 0 -a "$c0" -le $((P / 100)) -a "$(q '.instances[1].start_s > .instances[0].end_s and .tracker.loaded_by_run')" = true
ksft_check "A's misses = the dataset's pages (stat), own hits = pages (2nd epoch)" \
	eval 'within "$(q .instances[0].misses)" $P 1 && within "$(q .instances[0].own_hits)" $P 1 && [ "$(q .instances[0].shared_hits)" -le $((P / 100)) ]'
ksft_check "B: shared hits = 2 x pages, no misses" \
	eval 'within "$(q .instances[1].shared_hits)" $((2 * P)) 1 && [ "$(q .instances[1].misses)" -le $((P / 100)) ]'
c1=$(cached)
ksft_check "residency (mincore scan) = bytes fincore sees cached ($c1 pages)" \
	eval 'within "$(q "[.residency_bytes_per_node[]] | add / 4096")" "$c1" 1 && [ "$(q .residency_source)" = mincore ]'
ksft_check "the loaded tracker was reused by a second run" \
	eval '"$T" run --dataset "$ds" --stagger 0 --report "$tmp/r1b.json" -- true ::: true >/dev/null 2>&1 &&
	      [ "$(jq ".tracker.loaded_by_run == false and .tracker.dataset_id == $(q .tracker.dataset_id)" "$tmp/r1b.json")" = true ]'

# 6-7: simultaneous start, independent shuffles, cold: each page loaded once in all
cold
"$T" run --dataset "$ds" --stagger 0 --report "$tmp/r2.json" -- \
	$LG --seed 1 ::: $LG --seed 2 >/dev/null 2>&1
q() { jq -r "$1" "$tmp/r2.json"; }
ksft_diag "together: A $(q '.instances[0] | "\(.misses) \(.own_hits) \(.shared_hits)"'), B $(q '.instances[1] | "\(.misses) \(.own_hits) \(.shared_hits)"')"
ksft_check "together: misses of A and B add up to the dataset's pages" \
	within "$(q '[.instances[].misses] | add')" $P 1
ksft_check "together: each job's misses + own + shared = 2 epochs of pages" \
	eval 'within "$(q ".instances[0] | .misses + .own_hits + .shared_hits")" $((2 * P)) 1 &&
	      within "$(q ".instances[1] | .misses + .own_hits + .shared_hits")" $((2 * P)) 1'

# 8: progress:0.5 on the tracker's counters: B is released once A has loaded
# half of the dataset (cold before); B's first act is to ask fincore how much
# of it is cached (A: one reader thread, one batch queued, 40 ms per file)
cold
"$T" run --dataset "$ds" --stagger progress:0.5 --report "$tmp/r3.json" -- \
	"$T" loadgen "$ds" --order seq --threads 1 --queue 1 --compute 40ms ::: \
	sh -c "fincore -b -n -o PAGES $ds/* > $tmp/f3; exec $T loadgen $ds --order seq" >/dev/null 2>&1
got=$(awk '{ p += $1 } END { print p + 0 }' "$tmp/f3")
ksft_diag "progress:0.5: at B's release fincore saw $got of $P pages cached; the engine saw $(jq .instances[0].progress_at_next_release "$tmp/r3.json")"
ksft_check "progress:0.5: B released when about half the dataset was cached (fincore)" \
	awk -v g="$got" -v p="$P" 'BEGIN { exit !(g >= 0.48 * p && g <= 0.75 * p) }'

# 9-10: a chain of three: C follows B, which reads what A loaded. B counts as
# having its pages (shared hits) with the tracker; read_bytes (no tracker)
# never sees B load anything, so C waits for B's end
chain() {
	cold
	"$T" run --dataset "$ds" --stagger progress:0.5 --report "$tmp/$1.json" "${@:2}" -- \
		$LG --order seq --epochs 1 --compute 40ms ::: $LG --order seq --epochs 1 --compute 40ms ::: \
		$LG --order seq --epochs 1 >/dev/null 2>&1
	jq '.instances[2].start_s - .instances[1].end_s' "$tmp/$1.json"
}
gap=$(chain r4)
ksft_diag "chain with tracker: C released $gap s relative to B's end"
ksft_check "progress chain, tracker: C released well before B ended" \
	awk -v g="$gap" 'BEGIN { exit !(g < -0.3) }'
gap=$(chain r5 --no-track)
ksft_diag "chain without tracker: C released $gap s relative to B's end"
ksft_check "progress chain, --no-track (read_bytes): C released when B ended" \
	awk -v g="$gap" 'BEGIN { exit !(g > -0.05) }'

# 11-12: --no-track: no counts, residency still there; a bad name is made valid
"$T" run --dataset "$ds" --no-track --name 'my data/set' --report "$tmp/r6.json" -- true >/dev/null 2>&1
ksft_expect_eq "--no-track: tracker and counts null" \
	"$(jq '.tracker == null and .instances[0].misses == null' "$tmp/r6.json")" true
ksft_expect_eq "--name: characters tandem.ko refuses become '_'" \
	"$(jq -r .dataset_name "$tmp/r6.json")" my_data_set

# 13-14: the directory registered first by another command under another name
# (tracker dataset): a file belongs to one dataset, so run's and calibrate's
# jobs count in that one (they counted nothing before)
"$T" tracker unload >/dev/null 2>&1
"$T" tracker dataset pre "$ds" >/dev/null 2>&1
cold
"$T" run --dataset "$ds" --stagger 0 --report "$tmp/r7.json" -- $LG --order seq >/dev/null 2>&1
ksft_diag "registered as 'pre' first: A $(jq -r '.instances[0] | "\(.misses) \(.own_hits) \(.shared_hits)"' "$tmp/r7.json"), files present $(jq -r .tracker.files_present "$tmp/r7.json")"
ksft_check "run: the files registered under another dataset first, A's misses = the dataset's pages" \
	within "$(jq -r '.instances[0].misses' "$tmp/r7.json")" $P 1
"$T" -j calibrate --dataset "$ds" --sample 4M --warm-time 2s -o "$tmp/p8.json" -- \
	"$T" loadgen "$ds" --epochs 6 --order seq --compute 20ms >"$tmp/c8.out" 2>&1
ksft_diag "calibrate: $(jq -c '.instances[0] | {rate_bps, method: .warm_run.method, exit_s, exit_measured: .warm_run.exit_measured}' "$tmp/p8.json" 2>/dev/null || tail -n 2 "$tmp/c8.out")"
ksft_check "calibrate: the same files, its warm run measured by the tracker (rate > 0); its exit (SIGINT to its end; 6 epochs: not over within the warm run) measured, under 0.5 s for loadgen" \
	test "$(jq -r '.instances[0] | .rate_bps > 0 and .warm_run.method == "tracker" and .warm_run.exit_measured and .exit_s > 0 and .exit_s < 0.5' "$tmp/p8.json" 2>/dev/null)" = true

# 15: the job's stderr reaches calibrate's as it runs, but not what it prints
# when calibrate interrupts it to measure its exit (a Python job's
# KeyboardInterrupt traceback): a shell job that says so in its SIGINT trap
"$T" calibrate --dataset "$ds" --sample 4M --warm-time 2s -o "$tmp/p9.json" -- sh -c \
	"echo job-before-sigint >&2; trap 'echo job-after-sigint >&2; kill \$p; exit 130' INT; $T loadgen $ds --epochs 6 --order seq --compute 20ms >/dev/null & p=\$!; wait \$p" \
	>/dev/null 2>"$tmp/c9.err"
ksft_diag "calibrate's stderr: $(tr '\n' '|' <"$tmp/c9.err" | cut -c1-300); exit $(jq -c '.instances[0] | [.exit_s, .warm_run.exit_measured]' "$tmp/p9.json" 2>/dev/null)"
ksft_check "calibrate: the job's stderr before its SIGINT relayed, none after it; the exit measured" \
	eval 'grep -q "^job-before-sigint$" "$tmp/c9.err" && ! grep -q job-after-sigint "$tmp/c9.err" &&
	      test "$(jq -r ".instances[0].warm_run.exit_measured" "$tmp/p9.json")" = true'

# 16: the report's evicted: a job that reads the dataset and then drops it
# (POSIX_FADV_DONTNEED, as dd iflag=nocache does) evicted every page it loaded
cold
"$T" run --dataset "$ds" --report "$tmp/r9.json" -- sh -c \
	"$T loadgen $ds --epochs 1 --order seq >/dev/null && for f in $ds/*; do dd if=\$f iflag=nocache count=0 status=none; done" \
	>/dev/null 2>&1
ksft_diag "read then dropped: $(jq -r '.instances[0] | "misses \(.misses) evicted \(.evicted)"' "$tmp/r9.json"); cached after $(cached)"
ksft_check "run: a job that read the dataset and dropped it: evicted = misses = the dataset's pages" \
	eval 'within "$(jq -r .instances[0].misses "$tmp/r9.json")" $P 1 && within "$(jq -r .instances[0].evicted "$tmp/r9.json")" $P 1'

# 17-18: what an interrupted `tracker load` leaves (it pins in DIR-loading-PID
# and renames that to DIR when complete): a staging directory of a process
# that is gone, and, from a load that pinned in place, DIR without its meta
"$T" tracker unload >/dev/null 2>&1
sh -c 'exit 0' & dead=$!; wait $dead
mkdir "$TANDEM_TRACKER_DIR-loading-$dead" "$TANDEM_TRACKER_DIR"
"$T" tracker unload >"$tmp/u.out" 2>"$tmp/u.err"; rc=$?
ksft_diag "unload of the partial state: rc $rc, $(cat "$tmp/u.err" "$tmp/u.out" | tr '\n' '|')"
ksft_check "tracker unload: removes a partial pin directory and a dead load's staging directory, says so, exit 0" \
	eval '[ $rc = 0 ] && [ ! -e "$TANDEM_TRACKER_DIR" ] && [ ! -e "$TANDEM_TRACKER_DIR-loading-$dead" ] &&
	      grep -q "interrupted load" "$tmp/u.err"'
mkdir "$TANDEM_TRACKER_DIR-loading-$dead"
"$T" tracker load >/dev/null 2>&1; rc=$?
ksft_check "tracker load: after a dead load's staging directory, loads (meta present) and removes it" \
	eval '[ $rc = 0 ] && [ -e "$TANDEM_TRACKER_DIR/meta" ] && [ ! -e "$TANDEM_TRACKER_DIR-loading-$dead" ]'
"$T" tracker unload >/dev/null 2>&1
# 19: a pin directory without meta that holds a pin a load does not make
# (TANDEM_TRACKER_DIR set to a directory of other pins) is not touched: a
# map pinned as 'foreign' there (moved from a second tracker's pins)
src=$TANDEM_TRACKER_DIR-src
TANDEM_TRACKER_DIR=$src "$T" tracker load >/dev/null 2>&1
mkdir -p "$TANDEM_TRACKER_DIR" && mv "$src/files" "$TANDEM_TRACKER_DIR/foreign"
TANDEM_TRACKER_DIR=$src "$T" tracker unload >/dev/null 2>&1
"$T" tracker unload >/dev/null 2>&1; rc=$?
ksft_check "tracker unload: a meta-less directory holding another pin is left alone (exit non-zero: not loaded)" \
	eval '[ $rc != 0 ] && [ -e "$TANDEM_TRACKER_DIR/foreign" ]'
rm -f "$TANDEM_TRACKER_DIR/foreign"; rmdir "$TANDEM_TRACKER_DIR" "$src" 2>/dev/null
ksft_finish
