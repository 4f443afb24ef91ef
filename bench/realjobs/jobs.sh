# SPDX-License-Identifier: GPL-2.0
# The real-job scenarios' commands and instance specs, sourced by
# scenarios.sh and calnoise.sh (needs top, PY, MNT).
ds=$MNT/a/train
TR="$PY $top/examples/pytorch/train.py $ds --size 32 --workers 2 --epochs 2"
SLOW="--arch mobilenet_v3_small --batch-size 32"
FAST="--arch shufflenet_v2_x0_5 --batch-size 64"
FAST32="--arch shufflenet_v2_x0_5 --batch-size 32"
jobs_of() { # the commands of scenario $1, joined by :::
	case $1 in
	same2) echo "$TR $FAST --seed 1 ::: $TR $FAST --seed 2" ;;
	differ2) echo "$TR $SLOW --seed 1 ::: $TR $FAST --seed 2" ;;
	three) echo "$TR $SLOW --seed 1 ::: $TR $FAST --seed 2 ::: $TR $FAST32 --seed 3" ;;
	*) echo "scenarios.sh: unknown scenario $1" >&2; exit 2 ;;
	esac
}
insts_of() {
	case $1 in
	three) echo "--instance name=j0,order=indep,epochs=2,seed=1 --instance name=j1,order=indep,epochs=2,seed=2 --instance name=j2,order=indep,epochs=2,seed=3" ;;
	*) echo "--instance name=j0,order=indep,epochs=2,seed=1 --instance name=j1,order=indep,epochs=2,seed=2" ;;
	esac
}
# The host's speed now: one core's time for a fixed loop of the shell (about
# 0.7 s on an idle core here); it varies when the host's CPUs are shared
probe() { local t0 t1; t0=$(date +%s.%N); i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done
	t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
