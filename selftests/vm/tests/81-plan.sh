#!/bin/sh
# One plan (issue 34) in the VM with tandem.ko (steer=0) and the rig's
# throttled disk: three jobs that differ (slow, medium, fast; loadgen with
# seeded shuffles) read one dataset that fits in memory, run again and again
# as a sweep would. Run 1 starts from the order a first run keeps (each
# job's loadgen order, not yet stable) and makes it stable; from run 2 on
# the learned order is in effect and run plans the prefetch with the
# release times: simultaneous start twice, --stagger auto twice, each from
# a cold cache. Fails when a prefetch the plan started did not end done,
# when a run's predicted makespan is more than 10 % off the measured one,
# or when auto measures more than the run-to-run spread (the larger range
# of the two repeated schedules, at least 2 % of the makespan: two repeats
# can agree to 10 ms by chance, and a run with auto measured 1 % longer
# than simultaneous start with the same release vector, 0,0,0) above
# simultaneous start. The model's inputs come from one calibrate (one 4 s
# warm run each, after run 1). Kept short for make check (146 s before, issue 34's test):
# 32 files of 2 MiB (64 before), no tracker, one learning run (two
# before), four measured runs (five before).
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
DIR=${DATA:-/mnt/data}/t81
DS=$DIR/ds
JQ=/usr/bin/jq
ksft_plan 5
T0=$(date +%s)

cleanup() {
	tandemctl dataset del ds >/dev/null 2>&1
	rm -rf "$DIR"
	rm -f /var/lib/tandem/order/*.order
	rmmod tandem 2>/dev/null
}
if [ ! -x $JQ ]; then
	for i in 1 2 3 4 5; do ksft_skip "plan $i" "needs $JQ in the image"; done
	ksft_finish
fi
insmod "$KO" steer=0 || { ksft_fail "load tandem.ko"; ksft_finish; }
mkdir -p "$DS"
i=0
while [ $i -lt 32 ]; do	# zeros: loadgen does not verify here, and TCG pays for content
	dd if=/dev/zero of="$DS/f$(printf %03d $i).bin" bs=2M count=1 2>/dev/null
	i=$((i + 1))
done
rm -f /var/lib/tandem/order/*.order
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
LG="tandemctl -j loadgen $DS --epochs 1 --threads 1 --queue 4 --order shuffle"
A="$LG --compute 150ms --seed 11"
B="$LG --compute 60ms --seed 12"
C="$LG --compute 20ms --seed 13"
W=window=8M,order=indep,epochs=1
tandemctl dataset add ds "$DS" >/dev/null
# K: run number; ST: --stagger; P: the profile, once there is one
P=
run() {
	cold
	t=$(date +%s.%N)
	tandemctl run --dataset "$DS" $P --stagger "$2" --no-track --learn-order "$DIR/order" \
		--report "$DIR/r$1.json" -- \
		$A ::: $B ::: $C >"$DIR/out$1" 2>&1
	eval "rc$1=\$?"
	t=$(echo "$t $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
	ksft_diag "run $1 (--stagger $2): exit $(eval echo \$rc$1) in $t s, $($JQ -r '"measured \(.measured_makespan_s * 100 | round / 100) s, predicted \((.predicted_makespan_s // 0) * 100 | round / 100) s at \([.instances[].requested_s * 100 | round / 100] | join(",")); plan \(.plan.prefetch // "-") \([.plan.alternatives[]? | "\(.prefetch) \(.predicted_makespan_s * 100 | round / 100)"] | join(", ")); prefetch \(.prefetch.pages // 0) pages (\(.prefetch.state // "none")), through at \(.prefetch.finished_s // "-" | tostring | .[0:5])"' "$DIR/r$1.json" 2>/dev/null)"
}
# The order as a first run would have kept it (not stable yet): each job's
# loadgen order. Run 1 records the jobs' opens against it: stable when they
# repeat it, and from run 2 on it is in effect (one learning run, not two)
{
	printf '# tandem learned read order v1\n# dataset %s\n# instances 3\n# stable 0\n' "$DS"
	for j in 0 1 2; do tandemctl loadgen order "$DS" --seed $((11 + j)) | sed "s/^/$j /"; done
} >"$DIR/order"
run 1 0
ksft_check "run 1: the jobs' opens repeat their loadgen order, kept as stable" \
	eval 'test "$rc1" = 0 && $JQ -e ".read_order | .stable and .displacement == 0" "$DIR/r1.json" >/dev/null'
# calibrated after run 1 (TCG has then translated loadgen's code once);
# warm runs of 4 s, which cut the slow job (4.8 s) before its end: a warm
# run that ends by itself after its one epoch read it 22-25 % low (9.6-10.3
# MiB/s for 13.3, on the host too), while a cut one reads 12.8-13.4.
# One warm run each: three (the median) were tried on 2026-12-07 and did
# not help: isolated boots had MAPE above 10 % in 2 of 11 with one run and
# 0 of 8 with three, but in make check's full boot 0 of 6 with one (at most
# 3.6 %) and 1 of 2 with three (12.5 %: A's fitted start-up 0.52 s and
# rate 12.4 MiB/s against about 0.15 s and 13.3 in the runs); the diag
# below prints each instance's fitted terms for the next failure
cold
t=$(date +%s)
tandemctl calibrate --dataset "$DS" --sample 32M --warm-time 4s --warm-runs 1 --no-track \
	--instance "name=A,seed=11,$W" --instance "name=B,seed=12,$W" \
	--instance "name=C,seed=13,$W" -o "$DIR/p.json" -- $A ::: $B ::: $C >"$DIR/cal" 2>&1
rc=$?
ksft_diag "calibrate: exit $rc in $(($(date +%s) - t)) s (at $((t - T0)) s of the test); C $($JQ .host.cpu_contention "$DIR/p.json" 2>/dev/null), B(k) $($JQ -c "[.storage.bandwidth_bps[] | . / 1048576 | floor]" "$DIR/p.json" 2>/dev/null), rates $($JQ -c '[.instances[].rate_bps / 1048576 | . * 10 | floor / 10]' "$DIR/p.json" 2>/dev/null) MiB/s"
ksft_diag "calibrate: startup, window (MiB), exit (s), rate range (MiB/s) of A, B, C: $($JQ -r '[.instances[] | "\(.startup_s * 100 | round / 100) \(.window_bytes / 1048576 | . * 10 | round / 10) \(.exit_s * 100 | round / 100) \(.warm_run.rate_min_bps / 1048576 | . * 10 | round / 10)-\(.warm_run.rate_max_bps / 1048576 | . * 10 | round / 10)"] | join("; ")' "$DIR/p.json" 2>/dev/null)"
[ $rc -eq 0 ] || sed 's/^/# /' "$DIR/cal"
P="--profile $DIR/p.json"

run 2 0
run 3 auto
run 4 0
run 5 auto
grep -E '^(plan|prefetch \(|read order)' "$DIR/out3" | sed 's/^/# run 3, text: /'
ok=0
for k in 2 3 4 5; do [ "$(eval echo \$rc$k)" = 0 ] && ok=$((ok + 1)); done
ksft_check "runs 2-5: all exit 0 with the learned order in effect (a plan made with it)" \
	eval 'test $ok -eq 4 && for k in 2 3 4 5; do $JQ -e ".plan.modelled and .read_order.learned_before" "$DIR/r$k.json" >/dev/null || exit 1; done'
# a prefetch that races the jobs' own reads (same files, same time) ends
# done: a page a job inserted first is cached, not a full node (it ended
# "failed" in 6 of 20 runs before, 2026-12-07; 60-steer.c tests it alone)
ksft_check "runs 2-5: every prefetch the plan started ended done" \
	eval 'for k in 2 3 4 5; do $JQ -e ".prefetch == null or .prefetch.state == \"done\"" "$DIR/r$k.json" >/dev/null || exit 1; done'
# the model against the runs: |measured / predicted - 1| each, and their mean
errs=$(for k in 2 3 4 5; do $JQ -r '.error | fabs' "$DIR/r$k.json"; done)
mape=$(echo "$errs" | awk '{ s += $1; if ($1 > m) m = $1 } END { printf "%.4f %.4f", s / NR, m }')
ksft_diag "MAPE over runs 2-5: $(echo $mape | awk '{ printf "%.1f %% (largest %.1f %%)", $1 * 100, $2 * 100 }')"
ksft_check "runs 2-5: every predicted makespan within 10 % of the measured one" \
	awk -v m="$(echo $mape | cut -d' ' -f2)" 'BEGIN { exit !(m != "" && m <= 0.10) }'
m() { $JQ .measured_makespan_s "$DIR/r$1.json"; }
v=$(awk -v s1="$(m 2)" -v s2="$(m 4)" -v a1="$(m 3)" -v a2="$(m 5)" 'BEGIN {
	rs = s1 - s2; if (rs < 0) rs = -rs; ra = a1 - a2; if (ra < 0) ra = -ra;
	sp = rs > ra ? rs : ra; sim = (s1 + s2) / 2; au = (a1 + a2) / 2;
	if (sp < 0.02 * sim) sp = 0.02 * sim;
	printf "%.3f %.3f %.3f %+.1f", sim, au, sp, (au / sim - 1) * 100 }')
ksft_diag "simultaneous $(echo $v | cut -d' ' -f1) s, auto $(echo $v | cut -d' ' -f2) s (auto against simultaneous $(echo $v | cut -d' ' -f4) %), run-to-run spread (at least 2 %) $(echo $v | cut -d' ' -f3) s"
ksft_check "auto is not slower than simultaneous start beyond the run-to-run spread" \
	awk -v v="$v" 'BEGIN { split(v, x, " "); exit !(x[2] <= x[1] + x[3]) }'
cleanup
ksft_diag "81-plan: $(($(date +%s) - T0)) s from its start"
ksft_finish
