# Summary of a bench/tracker/run.sh output folder, as Markdown:
#   awk -f summary.awk meta.tsv machine.tsv passes.tsv cold.tsv stats.tsv
# Per load configuration: the reader's throughput per configuration and its
# CPU ratio against "off" (per round: median over the passes; over rounds:
# median and range), and the BPF programs' own time per GiB (kernel.bpf_stats)
# with its share of the reader's CPU time in "off" in the same round.
BEGIN {
	FS = "\t"; GIB = 1073741824
	# each phase's programs: the tracker's (trk_*), the peer's
	hook["read"] = "read|kretprobe_r|get_pages|folio_ma"
	hook["insert"] = "insert|add_to|filemap_"
	hook["evict"] = "evict"
	# "own": the dataset file re-read by the job that loaded it
	fname["ds"] = "dataset"; fname["own"] = "dataset, own pages"; fname["other"] = "other"
}
FNR == 1 { file++ }
file == 1 { meta[$1] = $2; next }
file > 1 && FNR == 1 { next }
file == 2 {
	nunit[$2]++; idle[$2] += $9 == "yes"
	mline[++nm] = sprintf("| %s | %s | %s s | %s | %s | %s -> %s | %s | %s |", $1, $2, $3, $4, $5, $6, $7, $8, $9)
	next
}
file == 3 {	# passes: round load config file pass GBps cpuGBps
	k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
	np[k]++; pw[k, np[k]] = $6; pc[k, np[k]] = $7
	rounds[$1] = 1; loads[$2] = 1; tputs[$2] = 1
	next
}
file == 4 {	# cold: round load config file GBps cpuGBps sysGBps
	# bytes per CPU second of the whole machine (busy load: less the spinner)
	cold[$1, $2, $3, $4] = NF >= 7 && $7 > 0 ? $7 : $6
	next
}
file == 5 {	# stats: round load who phase file prog cnt ns bytes
	k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
	rounds[$1] = 1; loads[$2] = 1
	# the phase's own hook: other programs (forks, faults) also fire for
	# other processes; they are listed per program below
	if ($6 ~ hook[$4]) { sns[k] += $8; scnt[k] += $7 }
	sbytes[k] = $9
	pk = k SUBSEP $6
	if (!(pk in pns)) { nprog[k]++; prog[k, nprog[k]] = $6 }
	pns[pk] += $8; pcnt[pk] += $7
	next
}

# median of the N values v[1..N] (sorted in place)
function med(v, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	if (n == 0) return 0
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
# "median [min-max]" of v[1..n] with format F
function mr(v, n, f,   m) {
	if (n == 0) return "-"
	m = med(v, n)
	return sprintf(f " [" f "-" f "]", m, v[1], v[n])
}
# median over the passes of (round, load, config, file); a: pc or pw
function pmed(r, l, c, f, which,   k, i, v) {
	k = r SUBSEP l SUBSEP c SUBSEP f
	for (i = 1; i <= np[k]; i++) v[i] = which == "cpu" ? pc[k, i] : pw[k, i]
	return med(v, np[k])
}

END {
	nc = split(meta["configs"], confs, " ")
	nr = 0
	for (r in rounds) rl[++nr] = r
	printf "# bench/tracker/run.sh: %s, %s CPUs, %s MiB files, %s passes, %d rounds\n\n", meta["kernel"], meta["cpus"], meta["mib"], meta["passes"], nr
	printf "Configurations: %s (variants: %s).\n\n", meta["configs"], meta["variants"]
	split("idle busy", lo, " ")
	for (li = 1; li <= 2; li++) {
		l = lo[li]
		if (!(l in loads)) continue
		printf "## %s (%d units, %d of them on an idle machine)\n\n", (l == "idle" ? "Idle: nothing else started by the bench" : "Busy: a busy loop on another CPU"), nunit[l], idle[l]
		if (tputs[l]) printf "| config | file | CPU GB/s | wall GB/s | CPU ratio vs off |\n|---|---|---|---|---|\n"
		for (ci = 1; ci <= nc && tputs[l]; ci++) for (fi = 1; fi <= 3; fi++) {
			c = confs[ci]; f = fi == 1 ? "ds" : fi == 2 ? "own" : "other"
			n = 0; delete vc; delete vw; delete vr
			for (i = 1; i <= nr; i++) {
				r = rl[i]
				if (!((r SUBSEP l SUBSEP c SUBSEP f) in np)) continue
				n++; vc[n] = pmed(r, l, c, f, "cpu"); vw[n] = pmed(r, l, c, f, "wall")
				o = pmed(r, l, "off", (f == "own" ? "ds" : f), "cpu"); vr[n] = o > 0 ? vc[n] / o : 0
			}
			if (n) printf "| %s | %s | %s | %s | %s |\n", c, fname[f], mr(vc, n, "%.2f"), mr(vw, n, "%.2f"), mr(vr, n, "%.3f")
		}
		printf "\nBPF programs' own time (kernel.bpf_stats): each phase's hook (names cut at 15 characters as the kernel keeps them); the share is of the CPU time, with nothing attached in the same round, of the cached reads (read) or of the cold read, all CPUs' busy time (insert, evict):\n\n"
		printf "| who | phase | file | events per GiB | ns per event | ms per GiB | share of the reader's CPU |\n|---|---|---|---|---|---|---|\n"
		for (ci = 2; ci <= nc; ci++) for (pi = 1; pi <= 3; pi++) for (fi = 1; fi <= 3; fi++) {
			w = confs[ci]; ph = pi == 1 ? "read" : pi == 2 ? "insert" : "evict"; f = fi == 1 ? "ds" : fi == 2 ? "own" : "other"
			n = 0; delete ve; delete vn; delete vm; delete vs
			for (i = 1; i <= nr; i++) {
				r = rl[i]; k = r SUBSEP l SUBSEP w SUBSEP ph SUBSEP f
				if (!(k in sns) || sbytes[k] == 0) continue
				n++; g = sbytes[k] / GIB
				ve[n] = scnt[k] / g; vn[n] = scnt[k] ? sns[k] / scnt[k] : 0; vm[n] = sns[k] / g / 1e6
				base = ph == "read" ? pmed(r, l, "off", (f == "own" ? "ds" : f), "cpu") : cold[r, l, "off", f]
				# reader CPU ns per GiB at BASE GB/s is GIB / BASE
				vs[n] = base > 0 ? 100 * (sns[k] / g) * base / GIB : 0
			}
			if (n) printf "| %s | %s | %s | %s | %s | %s | %s |\n", w, ph, fname[f], mr(ve, n, "%.0f"), mr(vn, n, "%.0f"), mr(vm, n, "%.3f"), (tputs[l] ? mr(vs, n, "%.2f%%") : "-")
			shared[l, w, ph, f] = n ? med(vs, n) : -1
			mpg[l, w, ph, f] = n ? med(vm, n) : -1
		}
		printf "\nPer program, reads of the dataset file (ns per GiB read, median over rounds):\n\n| who | program | events per GiB | ns per event | ms per GiB |\n|---|---|---|---|---|\n"
		for (ci = 2; ci <= nc; ci++) {
			w = confs[ci]; k0 = rl[1] SUBSEP l SUBSEP w SUBSEP "read" SUBSEP "ds"
			for (j = 1; j <= nprog[k0]; j++) {
				p = prog[k0, j]; n = 0; delete ve; delete vn; delete vm
				for (i = 1; i <= nr; i++) {
					k = rl[i] SUBSEP l SUBSEP w SUBSEP "read" SUBSEP "ds"
					if (!((k SUBSEP p) in pns) || sbytes[k] == 0) continue
					n++; g = sbytes[k] / GIB
					ve[n] = pcnt[k, p] / g; vn[n] = pcnt[k, p] ? pns[k, p] / pcnt[k, p] : 0; vm[n] = pns[k, p] / g / 1e6
				}
				if (n && med(ve, n) > 0) printf "| %s | %s | %.0f | %.0f | %.3f |\n", w, p, med(ve, n), med(vn, n), med(vm, n)
			}
		}
		printf "\nGoals (medians):\n\n"
		for (ci = 2; ci < nc; ci++) {
			w = confs[ci]; a = mpg[l, w, "read", "other"]; b = mpg[l, "cachestat", "read", "other"]
			printf "- %s: reads of the dataset file cost %.2f%% of the reader's CPU (goal <= 2%%), %.2f%% when the job that loaded them re-reads them; reads of the other file %.3f ms/GiB, %.2fx the peer's %.3f ms/GiB (goal <= 2x)\n", w, shared[l, w, "read", "ds"], shared[l, w, "read", "own"], a, (b > 0 ? a / b : 0), b
		}
		printf "\n"
	}
	printf "## Machine during each unit\n\n| round | load | took | others' CPUs | qemu | load average | top others (CPU s) | idle |\n|---|---|---|---|---|---|---|---|\n"
	for (i = 1; i <= nm; i++) print mline[i]
}
