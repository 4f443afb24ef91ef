# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Shared by the parts of `make demo` (scripts/demo*.sh), sourced: the
# statistics every part prints and the summary table's rows.
#
#   demo_stats V...                 "median min max" of the numbers
#   demo_compare NAME V... -- BNAME BV...
#                                   prints one sentence comparing the two
#                                   series (lower is better) and sets
#                                   DEMO_GAIN to the gain for the summary:
#                                   "-N.N%" when the difference of the
#                                   medians is larger than the larger range
#                                   of the two, "within noise (...)" otherwise
#   demo_row PART MEASURED BASELINE GAIN
#                                   one row of the summary table (appended to
#                                   $DEMO_SUMMARY when it is set)
#   demo_skip PART REASON           a row "skipped: REASON", and the line
#   demo_load                       "load 1/5/15 min: a b c, N other VM(s)"

demo_stats() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 }
		END { if (!NR) { print "- - -"; exit }
		      m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		      printf "%.2f %.2f %.2f\n", m, a[1], a[NR] }'
}

demo_compare() {
	local name=$1 bname v=() b=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do v+=("$1"); shift; done
	shift
	bname=$1
	shift
	b=("$@")
	local sv sb
	sv=$(demo_stats "${v[@]}") sb=$(demo_stats "${b[@]}")
	# shellcheck disable=SC2086
	set -- $sv $sb
	awk -v n="$name" -v bn="$bname" -v m="$1" -v lo="$2" -v hi="$3" \
		-v bm="$4" -v blo="$5" -v bhi="$6" -v k="${#v[@]}" -v bk="${#b[@]}" 'BEGIN {
		d = m - bm; s = hi - lo; if (bhi - blo > s) s = bhi - blo
		g = bm ? 100 * d / bm : 0; ad = d < 0 ? -d : d
		printf "%s: median %.2f s [%.2f-%.2f], %d runs; %s: median %.2f s [%.2f-%.2f], %d runs\n",
			n, m, lo, hi, k, bn, bm, blo, bhi, bk
		if (!k || !bk || bm == 0)
			printf "no runs to compare\n"
		else if (k < 2 || bk < 2)
			printf "difference %+.2f s (%+.1f%%); one run of one of them: no spread measured, so no verdict\n", d, g
		else if (ad > s)
			printf "difference %+.2f s (%+.1f%%), larger than the run-to-run spread (the larger range, %.2f s): %s is %s\n",
				d, g, s, n, d < 0 ? "faster" : "slower"
		else
			printf "difference %+.2f s (%+.1f%%), within the run-to-run spread (the larger range, %.2f s): within noise\n",
				d, g, s
	}'
	# shellcheck disable=SC2034 # read by the sourcing script
	DEMO_GAIN=$(awk -v m="$1" -v lo="$2" -v hi="$3" -v bm="$4" -v blo="$5" -v bhi="$6" \
		-v k="${#v[@]}" -v bk="${#b[@]}" 'BEGIN {
		d = m - bm; s = hi - lo; if (bhi - blo > s) s = bhi - blo; ad = d < 0 ? -d : d
		if (!k || !bk || bm == 0) printf "no runs to compare"
		else if (k < 2 || bk < 2) printf "%+.1f%% (one run: no spread)", 100 * d / bm
		else if (ad > s) printf "%+.1f%% (spread %.2f s)", 100 * d / bm, s
		else printf "within noise (%+.1f%%, spread %.2f s)", 100 * d / bm, s }')
}

demo_row() {
	[ -n "${DEMO_SUMMARY:-}" ] && printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$DEMO_SUMMARY"
	return 0
}

demo_skip() {
	echo "demo ($1): skipped: $2"
	demo_row "$1" - - "skipped: $2"
}

# need REASON...: skip this part ($PART) with REASON in the summary, exit 3
need() { demo_skip "$PART" "$*"; exit 3; }

# what every part needs: tandemctl ($T) built and jq
demo_need_base() {
	[ -x "$T" ] || need "$T missing: run make"
	command -v jq >/dev/null || need "jq missing (make deps)"
}

demo_load() {
	echo "load 1/5/15 min: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs, other VMs running: $(pgrep -c qemu-system || true)"
}
