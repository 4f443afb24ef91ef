#!/bin/sh
# Inside the VM rig (busybox sh, cwd /mnt/data); started by bench/stagger/run.sh
# or by `make demo`, which put params.sh (one scenario) in /extra. Steps:
#   1. tandem.ko loaded (MODULE=1) with steer=STEER (default 0: the kernel
#      places the page cache; 1: dataset pages moved to the CPU-less node 1)
#   2. the dataset: NFILES files of FSIZE (zeros, dd: its content does not
#      matter to a reader and generating a verifiable one costs a minute of TCG)
#   3. tandemctl calibrate: B(1), B(2) from cold reads of SAMPLE, the memory
#      per node, and each instance's compute-bound rate from a WARM-long
#      warm run of its own command (nothing is given by hand). Calibration
#      runs in the conditions of the runs: the dataset registered with
#      tandem.ko (steering) and the tracker, the warm runs tracked as jobs
#      (by calibrate itself);
#      under TCG their per-page costs are not negligible
#   5. REPS=N: steps 4 N times over (interleaved), for the run-to-run noise
#   4. for each stagger x of GRID: caches dropped, then `tandemctl run
#      --profile --stagger x` (x >= 0 delays B, x < 0 delays A), which
#      predicts M for that schedule and measures it; then (AUTO=1) the same
#      with --stagger auto, the model's own choice
# Results are lines "@@KIND ARG JSON" (the host parses them): @@profile,
# @@run X REPORT, @@meminfo; everything else is a comment.
. /extra/params.sh
D=/mnt/data/ds
: "${THREADS:=1}" "${QUEUE:=8}" "${WARM:=6s}" "${SAMPLE:=128M}" "${MODULE:=1}" "${AUTO:=1}"
: "${REPS:=1}" "${STEER:=0}" "${NOSTEER_FRAC:=1}"
: "${ORDER_A:=indep}" "${ORDER_B:=$ORDER_A}" "${EPOCHS_B:=$EPOCHS_A}" "${STEP_B:=$STEP_A}"

# loadgen's order: a shared seed makes the same order, as the model's "same"
lg_order() { [ "$1" = seq ] && echo "--order seq" || echo "--order shuffle --seed $2"; }
CMD_A="tandemctl -j loadgen $D --epochs $EPOCHS_A --threads $THREADS --queue $QUEUE --compute $STEP_A $(lg_order "$ORDER_A" "$SEED_A")"
CMD_B="tandemctl -j loadgen $D --epochs $EPOCHS_B --threads $THREADS --queue $QUEUE --compute $STEP_B $(lg_order "$ORDER_B" "$SEED_B")"
# the model's prefetch window: what the loader may hold ahead of the step
WIN=$((QUEUE * FSIZE_MIB))M
SPEC_A="name=A,order=$ORDER_A,epochs=$EPOCHS_A,seed=$SEED_A,window=$WIN"
SPEC_B="name=B,order=$ORDER_B,epochs=$EPOCHS_B,seed=$SEED_B,window=$WIN"

cold() { sync; echo 3 >/proc/sys/vm/drop_caches; sleep 1; }
meminfo() { # per-node free and file pages, MiB
	echo "@@meminfo $1 {$(for n in 0 1; do
		awk -v n=$n '$3 == "MemTotal:" { t = $4 } $3 == "MemFree:" { f = $4 } $3 == "FilePages:" { p = $4 }
			END { printf "%s\"node%d\":{\"total\":%d,\"free\":%d,\"file\":%d}", n ? "," : "", n, t / 1024, f / 1024, p / 1024 }' \
			/sys/devices/system/node/node$n/meminfo
	done)}"
}

echo "# scenario $NAME: $NFILES files of $FSIZE_MIB MiB; A: $CMD_A; B: $CMD_B; grid: $GRID"
if [ "$MODULE" = 1 ]; then
	insmod "$TANDEM_KO" steer="$STEER" || exit 1
	echo "# $(tandemctl status | grep -i 'cxl node' | head -n 1)"
fi
t=$(date +%s)
mkdir -p "$D"
i=0
while [ $i -lt "$NFILES" ]; do
	dd if=/dev/zero of="$D/sample-$(printf %06d $i).bin" bs=${FSIZE_MIB}M count=1 2>/dev/null || exit 1
	i=$((i + 1))
done
cold
echo "# dataset written in $(($(date +%s) - t)) s"
meminfo start

# what tandemctl run will do: the dataset with tandem.ko and a tracker
[ "$MODULE" = 1 ] && tandemctl dataset add ds "$D" >/dev/null
tandemctl tracker load --max-pages $((NFILES * FSIZE_MIB * 320)) >/dev/null
tandemctl tracker dataset ds "$D" >/dev/null
# calibrate tracks each warm run as a tracker job itself (in dataset ds,
# which holds the files); a `tandemctl track` around the command would move
# the job's reads to a job of its own, and calibrate would see none
tandemctl calibrate --dataset "$D" --sample "$SAMPLE" --warm-time "$WARM" \
	--instance "$SPEC_A" --instance "$SPEC_B" -o /tmp/profile.json -- \
	$CMD_A ::: $CMD_B \
	>/tmp/cal.out 2>&1 || { cat /tmp/cal.out; exit 1; }
sed 's/^/# calibrate: /' /tmp/cal.out
echo "@@profile - $(jq -c . /tmp/profile.json)"

run_one() { # X: -X..X stagger or "auto"
	case $1 in
	auto) st=auto ;;
	-*) st="${1#-},0" ;;
	*) st=$1 ;;
	esac
	cold
	tandemctl run --dataset "$D" --profile /tmp/profile.json --stagger "$st" \
		--nosteer-fraction "$NOSTEER_FRAC" \
		--report /tmp/run.json -- $CMD_A ::: $CMD_B >/tmp/run.out 2>&1
	rc=$?
	grep -E '^(name|A |B |measured|model|residency)' /tmp/run.out | sed "s/^/# run $1: /"
	[ $rc -eq 0 ] || { echo "# run $1 failed ($rc)"; tail -n 20 /tmp/run.out; return 1; }
	echo "@@run $1 $(jq -c . /tmp/run.json)"
	grep '^{"dataset"' /tmp/run.out | sed "s/^/@@lg $1 /"
	meminfo "after-$1"
}

rep=1
while [ $rep -le "$REPS" ]; do
	echo "# pass $rep of $REPS"
	for x in $GRID; do
		run_one "$x" || exit 1
	done
	if [ "$AUTO" = 1 ]; then run_one auto || exit 1; fi
	rep=$((rep + 1))
done
echo "# scenario $NAME done"
