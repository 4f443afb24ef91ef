// SPDX-License-Identifier: GPL-2.0
/*
 * The peer for bench/tracker: what libbpf-tools' cachestat counts, system
 * wide and without attribution: page-cache accesses (folio_mark_accessed),
 * insertions (filemap_add_folio) and dirtied pages, as global counters
 * updated with atomic adds, like cachestat.bpf.c. Attach points as there:
 * fentry, else kprobe; and, for this project's 6.18 host, which has
 * neither, the tracepoints that fire at the same places (one get_pages
 * event per batch of folios, not per folio).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

__s64 total = 0;	/* accesses (folios, or pages for the tracepoint) */
__s64 misses = 0;	/* insertions */
__s64 mbd = 0;		/* dirtied */

SEC("fentry/folio_mark_accessed")
int BPF_PROG(fentry_folio_mark_accessed)
{
	__sync_fetch_and_add(&total, 1);
	return 0;
}

SEC("fentry/filemap_add_folio")
int BPF_PROG(fentry_filemap_add_folio)
{
	__sync_fetch_and_add(&misses, 1);
	return 0;
}

SEC("kprobe/folio_mark_accessed")
int BPF_KPROBE(kprobe_folio_mark_accessed)
{
	__sync_fetch_and_add(&total, 1);
	return 0;
}

SEC("kprobe/filemap_add_folio")
int BPF_KPROBE(kprobe_filemap_add_folio)
{
	__sync_fetch_and_add(&misses, 1);
	return 0;
}

SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(tp_get_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last_index)
{
	__sync_fetch_and_add(&total, last_index - index + 1);
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(tp_add_to_page_cache)
{
	__sync_fetch_and_add(&misses, 1);
	return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(tp_dirty_folio)
{
	__sync_fetch_and_add(&mbd, 1);
	return 0;
}
