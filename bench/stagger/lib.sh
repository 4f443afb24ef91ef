# shellcheck shell=bash
# Shared by bench/stagger/run.sh (and, before 2026-12-06, make demo): boot the VM rig for one
# scenario, pull the results out of its TAP log, and tabulate predicted
# against measured makespans. Needs $top and $T (tandemctl on the host).

# Wait until no other VM runs (measurements are timing-sensitive and the
# machine's two cores are shared); print what was waited for.
wait_quiet() {
	local n waited=0
	while n=$(pgrep -c qemu-system 2>/dev/null) && [ "$n" -gt 0 ]; do
		[ $waited -eq 0 ] && echo "# waiting for $n other VM(s) to finish (pgrep -c qemu-system)"
		waited=$((waited + 10))
		sleep 10
	done
	[ $waited -gt 0 ] && echo "# waited $waited s"
	return 0
}

# run_scenario SCENARIO.sh DIR WAIT VMSCRIPT [EXTRA_FILE...]
# STAGGER_STREAM=1: show the VM's progress (its comment lines) as it runs.
run_scenario() {
	local scen=$1 dir=$2 wait=$3 script=$4 node0 node1 bps name t0 t1
	shift 4
	mkdir -p "$dir/extra"
	cp "$scen" "$dir/extra/params.sh"
	for f in "$@"; do cp "$f" "$dir/extra/"; done
	# shellcheck disable=SC1090
	read -r name node0 node1 bps < <(. "$scen"; echo "$NAME $NODE0 $NODE1 $BPS")
	[ "$wait" = 1 ] && wait_quiet
	echo "before $(cat /proc/loadavg) qemu $(pgrep -c qemu-system || true)" >"$dir/load.txt"
	echo "# scenario $name: VM node0 $node0 MiB, node1 $node1 MiB, disk $((bps / 1048576)) MiB/s; load $(cut -d' ' -f1-3 /proc/loadavg)"
	t0=$(date +%s)
	if [ "${STAGGER_STREAM:-0}" = 1 ]; then
		VM_LOGDIR=$dir bash "$top/selftests/vm/run-vm.sh" --script "$script" --files "$dir/extra" \
			--node0-mb "$node0" --node1-mb "$node1" --bps "$bps" \
			--timeout 1500 --vm-timeout 1600 2>&1 | tee "$dir/rig.out" |
			grep -av --line-buffered '^@@\|^# vm-\|^TAP\|^vm: ' || true
	else
		VM_LOGDIR=$dir bash "$top/selftests/vm/run-vm.sh" --script "$script" --files "$dir/extra" \
			--node0-mb "$node0" --node1-mb "$node1" --bps "$bps" \
			--timeout 1500 --vm-timeout 1600 --quiet >"$dir/rig.out" 2>&1 || true
	fi
	t1=$(date +%s)
	echo "after $(cat /proc/loadavg) qemu $(pgrep -c qemu-system || true) vm_s $((t1 - t0))" >>"$dir/load.txt"
	cp "$dir/vm/tap.log" "$dir/tap.log"
	grep -a '^@@profile ' "$dir/tap.log" | cut -d' ' -f3- | jq . >"$dir/profile.json" || true
	grep -a '^@@run ' "$dir/tap.log" | while read -r _ x json; do
		echo "{\"x\":\"$x\",\"r\":$json}"
	done >"$dir/runs.jsonl"
	grep -a '^# ' "$dir/tap.log" | grep -v '^# vm-' >"$dir/notes.txt" || true
	echo "# scenario $name: VM run took $((t1 - t0)) s, $(wc -l <"$dir/runs.jsonl") runs"
	if ! grep -aq "^# scenario $name done" "$dir/tap.log"; then
		echo "# scenario $name did not finish; tail of its log:" >&2
		grep -av '^@@' "$dir/tap.log" | tail -n 30 >&2
		return 1
	fi
}

# jq: one row per run; x is B's release minus A's (negative: A delayed)
JQ_ROWS='
  .r as $r
  | ($r.instances[1].requested_s - $r.instances[0].requested_s) as $x
  | { kind: (if .x == "auto" then "auto" else "grid" end), x: ($x * 1000 | round / 1000),
      measured: $r.measured_makespan_s, predicted: $r.predicted_makespan_s,
      a_end: $r.instances[0].end_s, b_end: $r.instances[1].end_s,
      pa_end: $r.instances[0].predicted_end_s, pb_end: $r.instances[1].predicted_end_s,
      a_miss: $r.instances[0].misses, b_miss: $r.instances[1].misses,
      a_own: $r.instances[0].own_hits, b_own: $r.instances[1].own_hits,
      a_sh: $r.instances[0].shared_hits, b_sh: $r.instances[1].shared_hits,
      search: $r.search, model_input: $r.model_input, residency: $r.residency_bytes_per_node }'

# jq: rows grouped per (kind, x): the runs' makespans, their minimum and mean
JQ_POINTS='
  group_by([.kind, .x]) | map({
    kind: .[0].kind, x: .[0].x, predicted: .[0].predicted, search: .[0].search,
    runs: map(.measured), min: (map(.measured) | min), mean: (map(.measured) | add / length),
    first: .[0] })'

# scenario_report DIR: DIR/table.md, DIR/measured.csv, DIR/m.svg, DIR/summary.json
scenario_report() {
	local dir=$1 name lo hi
	name=$(basename "$dir")
	[ -s "$dir/runs.jsonl" ] || { echo "# $name: no runs" >&2; return 1; }
	jq -c "$JQ_ROWS" "$dir/runs.jsonl" >"$dir/rows.jsonl"
	jq -s "$JQ_POINTS" "$dir/rows.jsonl" >"$dir/points.json"
	jq '
	  def err(m): ((.predicted - m) / m) | fabs;
	  (map(select(.kind == "grid"))) as $g
	  | (map(select(.kind == "auto")) | first) as $a
	  | ($g | map(select(.x == 0)) | first) as $z
	  | { name: "'"$name"'", n: ($g | length), runs: ($g | map(.runs | length) | add),
	      mape_min: (($g | map(err(.min)) | add) / ($g | length)),
	      mape_mean: (($g | map(err(.mean)) | add) / ($g | length)),
	      mape_all: (([$g[] | .predicted as $p | .runs[] | (($p - .) / .) | fabs] | add)
	                 / ($g | map(.runs | length) | add)),
	      spread: ([$g[] | select((.runs | length) > 1) | (.runs | max) / .min - 1] | max),
	      oracle: ($g | min_by(.min) | {x, min, mean}),
	      oracle_mean: ($g | min_by(.mean) | {x, min, mean}),
	      together: ($z | {min, mean, predicted}),
	      auto: (if $a then
	               # runs of the same schedule on the grid count too (δ* = 0: together)
	               (($g | map(select(.x == $a.x)) | first // {runs: []}).runs + $a.runs) as $p
	               | {x: $a.x, predicted: $a.predicted, runs: $p, min: ($p | min),
	                  mean: ($p | add / length), search: $a.search} else null end),
	      predicted_best_x: ($g | min_by(.predicted) | .x) }
	  | .auto_vs_oracle = (if .auto then .auto.min / .oracle.min - 1 else null end)
	  | .auto_vs_oracle_mean = (if .auto then .auto.mean / .oracle_mean.mean - 1 else null end)
	  | .auto_vs_together = (if .auto and .together.min then .auto.min / .together.min - 1 else null end)
	  | .auto_vs_together_mean = (if .auto and .together.mean then .auto.mean / .together.mean - 1 else null end)
	' "$dir/points.json" >"$dir/summary.json"
	jq -r '.[] | .x as $x | .runs[] | "\($x),\(.)"' "$dir/points.json" >"$dir/measured.csv"
	lo=$(jq '[.[].x] | min | if . > 0 then 0 else . end' "$dir/points.json")
	# past the last measured point, so that the plot shows where M(delta) turns
	hi=$(jq '[.[].x] | max | . + ([4, . / 2] | max) | ceil' "$dir/points.json")
	local ext steer nosteer
	steer=$(jq -r 'if .model_input.steer then "on" else "off" end' <(head -n 1 "$dir/rows.jsonl"))
	nosteer=$(. "$dir/extra/params.sh"; echo "${NOSTEER_FRAC:-1}")
	for ext in svg png; do
		"$T" model --profile "$dir/profile.json" --grid "$lo:$hi:0.5" --plot "$dir/m.$ext" \
			--steer "$steer" --nosteer-fraction "$nosteer" \
			--measured "$dir/measured.csv" >"$dir/model.txt" 2>&1 ||
			echo "# $name: model plot failed: $(tail -n 1 "$dir/model.txt")" >&2
	done
	scenario_table "$dir" >"$dir/table.md"
}

JQ_FMT='
  def f: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
  def pct: if . == null then "–" else ((. * 1000 | round) / 10 | tostring) + "%" end;'

scenario_table() {
	local dir=$1
	echo "| δ (s) | predicted M (s) | measured M (s), each run | min | error of min | mean | error of mean | misses A / B (pages, 1st run) | own hits A / B | shared hits A / B |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	jq -r "$JQ_FMT"'
	  .[] | "| \(if .kind == "auto" then "δ* = " + (.x | f) + " (auto)" else (.x | f) end) | \(.predicted | f) | \(.runs | map(f) | join(", ")) | \(.min | f) | \(((.predicted - .min) / .min) | pct) | \(.mean | f) | \(((.predicted - .mean) / .mean) | pct) | \(.first.a_miss) / \(.first.b_miss) | \(.first.a_own) / \(.first.b_own) | \(.first.a_sh) / \(.first.b_sh) |"
	' "$dir/points.json"
	jq -r "$JQ_FMT"'
	  "",
	  "MAPE over the \(.n) grid points (\(.runs) runs): \(.mape_min | pct) against the minimum of each point'"'"'s runs, \(.mape_mean | pct) against their mean, \(.mape_all | pct) over every run; largest spread between runs of one point: \(.spread | pct).",
	  "Oracle (best measured on the grid): \(.oracle.min | f) s at δ = \(.oracle.x | f) s (by the mean: \(.oracle_mean.mean | f) s at δ = \(.oracle_mean.x | f) s); simultaneous start: \(.together.min | f) s (mean \(.together.mean | f) s; predicted \(.together.predicted | f) s).",
	  (if .auto then "Model (`--stagger auto`): search best δ = \(.auto.search.best_delta_s[1] - .auto.search.best_delta_s[0] | f) s, M = \(.auto.search.best_makespan_s | f) s vs \(.auto.search.together_makespan_s | f) s together (gain \(.auto.search.gain | pct)), advice: \(if .auto.search.together then "start together" else "stagger" end); applied δ = \(.auto.x | f) s, measured (with the grid'"'"'s runs of that schedule) \(.auto.runs | map(f) | join(", ")) s: min \(.auto_vs_oracle | pct) vs the oracle and \(.auto_vs_together | pct) vs simultaneous start (means: \(.auto_vs_oracle_mean | pct), \(.auto_vs_together_mean | pct))." else "no --stagger auto run" end)
	' "$dir/summary.json"
}

summary() {
	local out=$1 d
	{
		echo "# Stagger validation ($(date -u +%Y-%m-%dT%H:%MZ))"
		for d in "$out"/*/; do
			[ -s "$d/runs.jsonl" ] || continue
			scenario_report "${d%/}"
			echo
			echo "## $(basename "$d")"
			echo
			grep -E '^(# |NAME|NODE0|NFILES|EPOCHS|GRID|REPS)' "$d/extra/params.sh" | sed 's/^/    /'
			echo "    load: $(tr '\n' ';' <"$d/load.txt")"
			echo
			cat "$d/table.md"
			echo
			echo "Plot: $d/m.svg (and m.png)"
		done
		echo
		echo "| scenario | grid points (runs) | MAPE (min / mean) | oracle M (δ) | simultaneous M | model δ* (advice) | M(δ*) measured | vs oracle | vs simultaneous |"
		echo "|---|---|---|---|---|---|---|---|---|"
		for d in "$out"/*/; do
			[ -s "$d/summary.json" ] || continue
			jq -r "$JQ_FMT"'
			  "| \(.name) | \(.n) (\(.runs)) | \(.mape_min | pct) / \(.mape_mean | pct) | \(.oracle.min | f) (\(.oracle.x | f)) | \(.together.min | f) | \(.auto.x | f) (\(if .auto.search.together then "together" else "stagger" end)) | \(.auto.min | f) | \(.auto_vs_oracle | pct) | \(.auto_vs_together | pct) |"
			' "$d/summary.json"
		done
	} >"$out/summary.md"
}
