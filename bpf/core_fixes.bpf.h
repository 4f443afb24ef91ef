/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences the tracker meets, in one place. vmlinux.h is
 * generated from the build machine's kernel (6.18 here); the "___old"
 * flavours below describe the older layouts so that CO-RE relocations pick
 * whichever the running kernel has. The kernels this is tested on are
 * Debian 12's 6.1 and Debian's 6.12 (the VM) and 6.18 (the host).
 */
#ifndef TANDEM_CORE_FIXES_BPF_H
#define TANDEM_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/*
 * struct folio's first word. 6.18 wraps page and folio flags in
 * memdesc_flags_t ("mm: introduce memdesc_flags_t", v6.18); 6.1 has a bare
 * unsigned long. The number of pages of a large folio moved from
 * folio->_folio_nr_pages (6.1) to folio->_nr_pages (present in 6.18).
 */
struct folio___old {
	unsigned long flags;
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

static __always_inline unsigned long tandem_folio_flags(struct folio *folio)
{
	if (bpf_core_field_exists(struct folio___old, _folio_nr_pages))
		return BPF_CORE_READ((struct folio___old *)folio, flags);
	return BPF_CORE_READ(folio, flags.f);
}

/*
 * folio_nr_pages(): a folio is large when PG_head is set on it; the bit
 * number of PG_head moved (16 in 6.1's enum pageflags, 6 in 6.18's), so it
 * is relocated from the kernel's own enum.
 */
static __always_inline __u32 tandem_folio_nr_pages(struct folio *folio)
{
	unsigned long head = 1UL << bpf_core_enum_value(enum pageflags, PG_head);

	if (!(tandem_folio_flags(folio) & head))
		return 1;
	if (bpf_core_field_exists(struct folio___old, _folio_nr_pages))
		return BPF_CORE_READ((struct folio___old *)folio, _folio_nr_pages);
	return BPF_CORE_READ(folio, _nr_pages);
}

/*
 * page->index: renamed to page->__folio_index in 6.18 (struct page is on
 * its way to being a memdesc; the folio owns the index). do_set_pte(), the
 * only caller, exists in 6.1, so the old name is the one used in practice.
 */
struct page___old {
	unsigned long index;
} __attribute__((preserve_access_index));

static __always_inline __u64 tandem_page_index(struct page *page)
{
	if (bpf_core_field_exists(struct page___old, index))
		return BPF_CORE_READ((struct page___old *)page, index);
	return BPF_CORE_READ(page, __folio_index);
}

/*
 * The mmap fallback's attach point: "mm: convert do_set_pte() to
 * set_pte_range()" (v6.5) replaced do_set_pte(vmf, page, addr), one page,
 * by set_pte_range(vmf, folio, page, nr, addr), nr pages of folio from
 * page on. Both are in the attach table (ctl/tracker_load.c); the loader
 * keeps the one the kernel has. A page of a large folio carries no index
 * of its own: it is the folio's plus the page's offset in the folio's
 * memmap (struct page's size relocated from the kernel's BTF).
 */
static __always_inline __u64 tandem_folio_page_index(struct folio *folio, struct page *page)
{
	__u64 off = ((__u64)page - (__u64)folio) / bpf_core_type_size(struct page);

	return BPF_CORE_READ(folio, index) + off;
}

/*
 * filemap_get_pages()'s second argument was the struct iov_iter * of the
 * read until "mm: Pass info, not iter, into filemap_get_pages()" (v6.4)
 * made it a size_t count. A tracing program cannot relocate a function
 * prototype, so the loader reads it from the kernel's BTF and sets this.
 */
const volatile bool get_pages_arg_is_iter = false;

static __always_inline __u64 tandem_get_pages_count(__u64 arg)
{
	if (get_pages_arg_is_iter)
		return BPF_CORE_READ((struct iov_iter *)arg, count);
	return arg;
}

/*
 * mm_filemap_get_pages (tracepoint added by "filemap: add trace events for
 * get_pages, map_pages, and fault", 2024; absent in 6.1) reports the
 * requested range [index, last_index]; the loader checks at load time that
 * the kernel's prototype is the 3-argument one this program was written for.
 *
 * sched_process_exit gained a "bool group_dead" argument after 6.1; the
 * programs read only the task, which both versions pass first, and decide
 * "last thread" from task->signal->live, which both kernels decrement
 * before the tracepoint fires.
 */

#endif
