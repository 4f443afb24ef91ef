#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# All of bench/realjobs/measure.sh's units, REPS times interleaved, each group
# of units under $QUIET (default /work/bin/quiet when it exists: waits until
# nothing heavy runs on this shared machine), then calibrate + run over a few
# staggers. Results in build/bench/realjobs/results.jsonl.
#
#   bench/realjobs/run.sh [REPS] [--no-measure] [--no-calrun]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
M=$here/measure.sh
reps=${1:-3}
QUIET=${QUIET-$( [ -x /work/bin/quiet ] && echo /work/bin/quiet || true )}
measure=1 calrun=1
for a in "$@"; do
	case $a in --no-measure) measure=0 ;; --no-calrun) calrun=0 ;; esac
done
q() { $QUIET bash -c "$*"; }
bash "$M" setup
if [ $measure = 1 ]; then
	for rep in $(seq "$reps"); do
		echo "# rep $rep: startup and storage"
		q "bash $M startup; bash $M importcpu; for m in alone shared2 separate2 shared3 separate3 separate2w; do bash $M storage \$m; done"
		echo "# rep $rep: CPU sharing, shufflenet"
		q "for w in 0 1 2 4; do bash $M share shufflenet_v2_x0_5 \$w; done"
		echo "# rep $rep: CPU sharing, mobilenet"
		q "for w in 0 2; do bash $M share mobilenet_v3_small \$w; done"
		echo "# rep $rep: decode"
		q "bash $M decode"
	done
fi
if [ $calrun = 1 ]; then
	q "bash $M calibrate"
	for rep in $(seq "$reps"); do
		echo "# rep $rep: tandemctl run at staggers"
		q "for st in 0 5 10 20 auto; do bash $M run \$st; done"
	done
fi
