// SPDX-License-Identifier: GPL-2.0
/*
 * cachestat [INTERVAL_S [COUNT]]: the peer tool for bench/tracker, after
 * libbpf-tools' cachestat: system-wide page-cache hits, misses, dirtied
 * pages and hit ratio per interval, until COUNT lines, SIGINT or SIGTERM.
 * Attaches per event: fentry, else kprobe, else tracepoint; prints the
 * choice on stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cachestat.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* can a trivial fentry program attach to FUNC? */
static bool fentry_ok(const struct btf *btf, const char *func)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },
		{ .code = 0x95 },
	};
	int id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = id);
	int prog, link;

	if (id <= 0)
		return false;
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "probe", "GPL", insns, 2, &o);
	if (prog < 0)
		return false;
	link = bpf_raw_tracepoint_open(NULL, prog);
	if (link >= 0)
		close(link);
	close(prog);
	return link >= 0;
}

static bool tp_ok(const struct btf *btf, const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
}

static bool kprobe_ok(void)
{
	return !access("/sys/bus/event_source/devices/kprobe/type", R_OK);
}

/* keep exactly one of FENTRY, KPROBE, TP; returns the kept one's name */
static const char *choose(const struct btf *btf, const char *func, const char *tpname,
			  struct bpf_program *fentry, struct bpf_program *kprobe,
			  struct bpf_program *tp)
{
	bool f = fentry && fentry_ok(btf, func);
	bool k = !f && kprobe && kprobe_ok();
	bool t = !f && !k && tp && tp_ok(btf, tpname);

	if (fentry)
		bpf_program__set_autoload(fentry, f);
	if (kprobe)
		bpf_program__set_autoload(kprobe, k);
	if (tp)
		bpf_program__set_autoload(tp, t);
	return f ? bpf_program__section_name(fentry) : k ? bpf_program__section_name(kprobe) :
	       t ? bpf_program__section_name(tp) : NULL;
}

int main(int argc, char **argv)
{
	double interval = argc > 1 ? atof(argv[1]) : 1.0;
	long count = argc > 2 ? atol(argv[2]) : 0;
	struct cachestat_bpf *skel;
	const char *acc, *add, *dirty;
	struct btf *btf;
	int err = 1;

	libbpf_set_print(quiet);
	btf = btf__load_vmlinux_btf();
	skel = cachestat_bpf__open();
	if (!btf || !skel) {
		fprintf(stderr, "cachestat: cannot open BTF or the BPF object\n");
		goto out;
	}
	acc = choose(btf, "folio_mark_accessed", "mm_filemap_get_pages",
		     skel->progs.fentry_folio_mark_accessed,
		     skel->progs.kprobe_folio_mark_accessed, skel->progs.tp_get_pages);
	add = choose(btf, "filemap_add_folio", "mm_filemap_add_to_page_cache",
		     skel->progs.fentry_filemap_add_folio,
		     skel->progs.kprobe_filemap_add_folio, skel->progs.tp_add_to_page_cache);
	dirty = choose(btf, "", "writeback_dirty_folio", NULL, NULL, skel->progs.tp_dirty_folio);
	if (!acc || !add) {
		fprintf(stderr, "cachestat: no attach point for accesses or insertions\n");
		goto out;
	}
	fprintf(stderr, "cachestat: %s, %s, %s\n", acc, add, dirty ? dirty : "(no dirty count)");
	if (cachestat_bpf__load(skel) || cachestat_bpf__attach(skel)) {
		fprintf(stderr, "cachestat: cannot load or attach: %s\n", strerror(errno));
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("%8s %8s %8s %7s\n", "HITS", "MISSES", "DIRTIES", "RATIO");
	fflush(stdout);
	for (long n = 0; !stop && (!count || n < count); n++) {
		__s64 total, misses, mbd, hits;

		usleep(interval * 1e6);
		total = __atomic_exchange_n(&skel->bss->total, 0, __ATOMIC_RELAXED);
		misses = __atomic_exchange_n(&skel->bss->misses, 0, __ATOMIC_RELAXED);
		mbd = __atomic_exchange_n(&skel->bss->mbd, 0, __ATOMIC_RELAXED);
		/* as cachestat: accesses less insertions, clamped at zero */
		hits = total - misses > 0 ? total - misses : 0;
		printf("%8lld %8lld %8lld %6.2f%%\n", (long long)hits, (long long)misses,
		       (long long)mbd, hits + misses ? 100.0 * hits / (hits + misses) : 0.0);
		fflush(stdout);
	}
	err = 0;
out:
	cachestat_bpf__destroy(skel);
	btf__free(btf);
	return err;
}
