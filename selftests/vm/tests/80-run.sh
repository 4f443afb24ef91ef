#!/bin/sh
# tandemctl run in the VM with tandem.ko and the tracker: the dataset is
# registered with both, release offsets as the instances see them (their own
# clock, coreutils date), sharing counts against the files' sizes (stat) and
# fincore, residency per node from tandem.ko against fincore and the node's
# meminfo, a failing instance, SIGINT, progress:F on the tracker's counters,
# --prefetch-order (the jobs verify every byte; a bad order file starts nothing),
# the learned read order (by default with the module: kept after a run,
# stable after a second, prefetched by in the third; the jobs verify), and
# that a run cancels only its own prefetch, not one started after it.
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
DIR=${DATA:-/mnt/data}/t80
DS=$DIR/ds
DATE=/usr/bin/date	# busybox's date has no %N
JQ=/usr/bin/jq
export TANDEM_TRACKER_DIR=/sys/fs/bpf/tandem-t80
ksft_plan 19

cleanup() {
	tandemctl tracker unload >/dev/null 2>&1
	rm -rf "$DIR"
	rmmod tandem 2>/dev/null
}
if [ ! -x $DATE ] || [ ! -x $JQ ] || ! command -v fincore >/dev/null; then
	for i in $(seq 19); do ksft_skip "run $i" "needs $DATE, $JQ and fincore in the image"; done
	ksft_finish
fi
insmod "$KO" || { ksft_fail "load tandem.ko"; ksft_finish; }
mkdir -p "$DIR"
tandemctl loadgen gen "$DS" --files 32 --size 1M:uniform --seed 5 >/dev/null
P=$(stat -c %s "$DS"/* | awk '{ p += int(($1 + 4095) / 4096) } END { print p }')
ksft_diag "dataset: 32 files, $P pages"
cold() { sync; echo 1 >/proc/sys/vm/drop_caches; }
cached() { fincore --noheadings --raw --output PAGES "$DS"/* | awk '{ p += $1 } END { print p + 0 }'; }
within() { awk -v g="$1" -v w="$2" -v p="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * p / 100 + 2) }'; }
node1_file() { awk '/FilePages/ { print $4 * 1024 }' /sys/devices/system/node/node1/meminfo; }

# 1-3: release offsets as three instances see them on their own clocks: each
# is coreutils date itself (one exec, no shell), printing to run's stdout.
# One run first: under TCG the first exec of a program pays for translating
# its code, which would show as a late first instance; and all three are
# released from their wait (0.2, 0.5, 0.8 s), so each pays the same wake-up.
# The bound is 100 ms here: the engine's own fork times are checked at 50 ms
# (3), but from the fork to date reading its clock is an exec under TCG, which
# took 64 ms more for one instance than for another once (CI, 2026-12-02);
# the 50 ms claim on the instances' own clocks is test_run.sh's, on the host
# (it took 211 ms more once, CI 2026-12-07, every other run under 11 ms: a run
# whose instances saw more than 100 ms is run once more, and the second counts;
# an engine that releases late fails both)
$DATE >/dev/null
offsets_run() {
	tandemctl run --dataset "$DS" --stagger 0.2,0.5,0.8 --report "$DIR/r0.json" -- \
		$DATE +%s.%N ::: $DATE +%s.%N ::: $DATE +%s.%N >"$DIR/out0" 2>&1
	rc=$?
	grep -E '^[0-9]+\.[0-9]+$' "$DIR/out0" | sort -n >"$DIR/stamps"
	ok=$(awk -v a="$(sed -n 1p $DIR/stamps)" -v b="$(sed -n 2p $DIR/stamps)" -v c="$(sed -n 3p $DIR/stamps)" \
		'BEGIN { d1 = b - a - 0.3; d2 = c - a - 0.6;
			 printf "# instance-side offset errors: %+.1f ms, %+.1f ms\n", d1 * 1000, d2 * 1000;
			 if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2;
			 print (d1 < 0.1 && d2 < 0.1) ? "yes" : "no" }')
	echo "$ok" | grep '^#'
}
offsets_run
rc1=$rc
cp "$DIR/r0.json" "$DIR/r0-first.json" 2>/dev/null
if [ $rc -eq 0 ] && [ "$(echo "$ok" | tail -n 1)" != yes ]; then
	ksft_diag "an instance saw its release over 100 ms off: once more"
	offsets_run
fi
q() { $JQ -r "$1" "$DIR/r0.json"; }
# the first run's report: it loaded the tracker (a second finds it loaded)
ksft_check "run exits 0; dataset registered with tandem.ko and the tracker (loaded by the run)" \
	test $rc1 -eq 0 -a "$($JQ -r '.module.dataset_id > 0 and .module.files_added == 32 and .tracker.loaded_by_run' "$DIR/r0-first.json")" = true
ksft_expect_eq "offsets seen by the instances (their own clocks) within 100 ms (exec under TCG)" "$(echo "$ok" | tail -n 1)" yes
ksft_expect_eq "reported starts within 50 ms of requested" \
	"$(q '[.instances[] | (.start_s - .requested_s) | fabs < 0.05] | all')" true

# 4-7: three instances 0.3 s apart read the dataset once in the same order;
# cold, so what one loads the others share
cold
c0=$(cached)
LG="tandemctl loadgen $DS --order seq --epochs 1 --compute 5ms"
tandemctl run --dataset "$DS" --stagger 0.3 --report "$DIR/r1.json" -- \
	$LG ::: $LG ::: $LG >"$DIR/out1" 2>&1
grep -v '^epoch\|^total\|^dataset /' "$DIR/out1" | sed 's/^/# /'
q() { $JQ -r "$1" "$DIR/r1.json"; }
ksft_diag "cold before: $c0 pages; misses/own/shared: $(q '[.instances[] | "\(.name) \(.misses)/\(.own_hits)/\(.shared_hits)"] | join(", ")')"
ksft_check "misses of all jobs = the dataset's pages (stat), cold start" \
	eval 'test "$c0" -le $((P / 100)) && within "$(q "[.instances[].misses] | add")" $P 1'
ksft_check "each job: misses + own + shared hits = one pass over the dataset" \
	eval '(for i in 0 1 2; do within "$(q ".instances[$i] | .misses + .own_hits + .shared_hits")" $P 1 || exit 1; done)'
c1=$(cached)
n1=$(node1_file)
ksft_diag "residency: $(q '.residency_source'): $(q '.residency_bytes_per_node | map(. / 4096) | join(" ")') pages per node, steered $(q .module.steered_pages); fincore $c1 pages; node1 FilePages $((n1 / 4096)) pages"
ksft_check "residency from tandem.ko: per-node sum = fincore's cached pages" \
	eval 'test "$(q .residency_source)" = tandem.ko && within "$(q "[.residency_bytes_per_node[]] | add / 4096")" "$c1" 1'
ksft_check "steered to node 1: reported there, and within node 1's FilePages" \
	eval 'test "$(q .module.steered_pages)" -gt 0 && test "$(q ".residency_bytes_per_node[1] // 0")" -gt 0 &&
	      test "$(q ".residency_bytes_per_node[1] // 0 | floor")" -le "$n1"'

# 8-9: a failing instance: non-zero exit, the other ran to its end
tandemctl run --dataset "$DS" --stagger 0.1 --report "$DIR/r2.json" -- \
	$LG ::: sh -c 'exit 3' >/dev/null 2>&1
rc=$?
ksft_check "failing instance: exit status non-zero" test $rc -ne 0
ksft_expect_eq "failing instance: its exit code reported, the other exited 0" \
	"$($JQ '.instances[1].exit == 3 and .instances[0].exit == 0' "$DIR/r2.json")" true

# 10-11: SIGINT leaves no instance (a shell trapping INT, its child, a
# setsid grandchild, and an instance not yet released)
tandemctl run --dataset "$DS" --stagger 0.2,30 --grace 1 -- \
	sh -c "echo \$\$ > $DIR/p1; exec sleep 60" ::: \
	sh -c "trap '' INT TERM; echo \$\$ > $DIR/p2; setsid sleep 60 & echo \$! > $DIR/p3; while :; do sleep 1; done" ::: \
	sh -c "echo \$\$ > $DIR/p4; sleep 60" >/dev/null 2>&1 &
tpid=$!
for _ in $(seq 100); do [ -s "$DIR/p3" ] && break; sleep 0.1; done
kill -INT $tpid
wait $tpid
rc=$?
alive=0
for f in p1 p2 p3; do
	p=$(cat "$DIR/$f" 2>/dev/null) || { ksft_diag "no pid file $f"; alive=$((alive + 1)); continue; }
	kill -0 "$p" 2>/dev/null && { ksft_diag "$f ($p) still running"; alive=$((alive + 1)); }
done
left=$(ps -o pid,args | grep -c '[s]leep 60')
ksft_check "SIGINT: tandemctl run exits non-zero" test $rc -ne 0
ksft_check "SIGINT: no instance process left ($alive of p1-p3 alive, $left 'sleep 60'), the pending one never ran" \
	test $alive -eq 0 -a "$left" -eq 0 -a ! -e "$DIR/p4"

# 12: progress:0.5 with the tracker: B is released once A has loaded half
# of the dataset (cold before); B's first act is to ask fincore how much of
# it is cached (A: one reader, one batch queued, 80 ms per file)
cold
tandemctl run --dataset "$DS" --stagger progress:0.5 --report "$DIR/r3.json" -- \
	tandemctl loadgen "$DS" --order seq --threads 1 --queue 1 --compute 80ms ::: \
	sh -c "fincore --noheadings --raw --output PAGES $DS/* > $DIR/f3; exec $LG" >/dev/null 2>&1
got=$(awk '{ p += $1 } END { print p + 0 }' "$DIR/f3")
ksft_diag "progress:0.5: at B's release fincore saw $got of $P pages cached; the engine saw $($JQ .instances[0].progress_at_next_release "$DIR/r3.json")"
ksft_check "progress:0.5 on the tracker: B released when about half the dataset was cached" \
	awk -v g="$got" -v p="$P" 'BEGIN { exit !(g >= 0.48 * p && g <= 0.75 * p) }'

# 13: a second run reuses the registration (tandem.ko and tracker)
tandemctl run --dataset "$DS" --report "$DIR/r4.json" -- true >/dev/null 2>&1
ksft_expect_eq "rerun: tandem.ko dataset reused, tracker not reloaded" \
	"$($JQ '.module.created == false and .module.files_present == 32 and .tracker.loaded_by_run == false' "$DIR/r4.json")" true
# 14-15: --prefetch-order: tandem.ko prefetches the dataset in the two jobs'
# order (loadgen order) while they run; both jobs check every byte they read
cold
tandemctl loadgen order "$DS" --seed 1,2 >"$DIR/order"
pf0=$(tandemctl -j residency ds | $JQ .counters.prefetched)
tandemctl run --dataset "$DS" --no-track --prefetch-order "$DIR/order" --report "$DIR/r5.json" -- \
	tandemctl loadgen "$DS" --seed 1 --verify --compute 20ms ::: \
	tandemctl loadgen "$DS" --seed 2 --verify --compute 20ms >"$DIR/out5" 2>&1
rc=$?
pf1=$(tandemctl -j residency ds | $JQ .counters.prefetched)
state=$(tandemctl -j residency ds | $JQ -r .prefetch.state)
ksft_diag "prefetch-order: exit $rc, prefetched $((pf1 - pf0)) of $P pages, steered $($JQ .module.steered_pages "$DIR/r5.json") (all runs), prefetch $state"
ksft_check "--prefetch-order: both jobs verified every byte, the prefetch started and read pages" \
	test $rc -eq 0 -a "$($JQ .module.prefetch_started "$DIR/r5.json")" = true -a $((pf1 - pf0)) -gt 0
ksft_check "--prefetch-order: no prefetch left running after the run ($state)" \
	test "$state" = done -o "$state" = cancelled

# 16: an order naming a file outside the dataset: refused before anything starts
echo x >"$DIR/outside"
echo "$DIR/outside" >>"$DIR/order"
tandemctl run --dataset "$DS" --no-track --prefetch-order "$DIR/order" -- \
	touch "$DIR/ran16" >/dev/null 2>"$DIR/err16"
rc=$?
ksft_check "--prefetch-order with a file outside the dataset: exit 1, says which, nothing ran" \
	eval 'test $rc -eq 1 && grep -q "$DIR/outside is not a file of the dataset" "$DIR/err16" && test ! -e "$DIR/ran16"'
# 17-18: the learned read order, by default: two runs of the same jobs make it
# stable, the third prefetches in it (other commands than 14-15's, which
# learned theirs)
cold
rm -f /var/lib/tandem/order/*.order
for k in 1 2 3; do
	cold
	pf0=$(tandemctl -j residency ds | $JQ .counters.prefetched)
	tandemctl run --dataset "$DS" --no-track --report "$DIR/l$k.json" -- \
		tandemctl loadgen "$DS" --seed 3 --verify --compute 10ms ::: \
		tandemctl loadgen "$DS" --seed 4 --verify --compute 10ms >"$DIR/outl$k" 2>&1
	eval "rc$k=\$?"
	pf1=$(tandemctl -j residency ds | $JQ .counters.prefetched)
	eval "pf$k=$((pf1 - pf0))"
	ksft_diag "learned order run $k: exit $(eval echo \$rc$k), prefetched $((pf1 - pf0)) pages, $($JQ -c '.read_order | [.file, .files_recorded, .displacement, .stable, .used]' "$DIR/l$k.json")"
done
ksft_check "learned order: kept in /var/lib/tandem/order by default, stable after the second run" \
	eval 'test $rc1 -eq 0 -a $rc2 -eq 0 &&
	      $JQ -e ".read_order | .default_file and (.file | startswith(\"/var/lib/tandem/order/\")) and .files_recorded == 64 and .stable and (.used | not)" "$DIR/l2.json" >/dev/null &&
	      $JQ -e ".module.prefetch_started == false" "$DIR/l2.json" >/dev/null'
ksft_check "learned order: the third run prefetches in it, both jobs verified every byte" \
	eval 'test $rc3 -eq 0 -a $pf3 -gt 0 &&
	      $JQ -e ".module.prefetch_source == \"learned\" and .module.prefetch_started and .read_order.used and .read_order.displacement == 0" "$DIR/l3.json" >/dev/null'
# 19: a run's end cancels only its own prefetch: the job lets the run's
# prefetch finish, drops the cache and starts another one (1 MiB/s, about
# 30 s: another user's), which must still run when the run has ended
cold
tandemctl loadgen order "$DS" --seed 1 >"$DIR/order19"
tandemctl run --dataset "$DS" --no-track --no-learn-order --prefetch-order "$DIR/order19" \
	--report "$DIR/r19.json" -- sh -c 'sleep 2; sync; echo 1 >/proc/sys/vm/drop_caches;
		tandemctl prefetch --no-wait --rate 1M ds; sleep 1' >"$DIR/out19" 2>&1
rc=$?
state=$(tandemctl -j residency ds | $JQ -r .prefetch.state)
tandemctl prefetch cancel ds >/dev/null 2>&1
ksft_diag "after the run: exit $rc, its prefetch started $($JQ .module.prefetch_started "$DIR/r19.json"), the other prefetch $state"
ksft_check "a run's end leaves a prefetch started after its own running" \
	test $rc -eq 0 -a "$state" = running
cleanup
ksft_finish
