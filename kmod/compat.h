/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences of tandem.ko, all in one place (the only place
 * LINUX_VERSION_CODE is used; checkpatch is told so). Built and tested
 * against Debian 12's 6.1 and Debian's 6.12 LTS (Documentation/testing.md);
 * each entry names the change that makes the kernels differ.
 */
#ifndef _TANDEM_COMPAT_H
#define _TANDEM_COMPAT_H

#include <linux/err.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/version.h>
#include <net/genetlink.h>

/*
 * "filemap: Convert replace_page_cache_page() to replace_page_cache_folio()"
 * (v6.2) replaced the page-based export of 6.1. The folio version accounts
 * NR_FILE_PAGES and the memcg charge by folio_nr_pages() (checked in 6.12's
 * mm/filemap.c); 6.1's page version counts one page whatever the folio's
 * size (__dec_lruvec_page_state()), so only order-0 folios may go through
 * it: TANDEM_STEER_LARGE says whether large folios can be steered.
 *
 * Both move one page-cache reference, but the page cache holds
 * folio_nr_pages() references on a folio (__filemap_add_folio(),
 * filemap_free_folio()); for a large folio the other nr - 1 are moved here,
 * as __folio_migrate_mapping() does, or truncation would free the new folio
 * while in use and the old one would never be freed. The caller holds its
 * own reference on old, so old is not freed here.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define TANDEM_STEER_LARGE	true
static inline void tandem_replace_page_cache(struct folio *old, struct folio *new)
{
	long nr = folio_nr_pages(old);

	if (nr > 1)
		folio_ref_add(new, nr - 1);
	replace_page_cache_folio(old, new);
	if (nr > 1)
		folio_put_refs(old, nr - 1);
}
#else
#define TANDEM_STEER_LARGE	false
static inline void tandem_replace_page_cache(struct folio *old, struct folio *new)
{
	replace_page_cache_page(&old->page, &new->page);
}
#endif

/*
 * "mm: alloc_pages_bulk: rename API" (v6.14) renamed the array form of the
 * bulk allocator; 6.1 exports it as __alloc_pages_bulk(), 6.12 as
 * alloc_pages_bulk_noprof(), both behind the same inline name. Fills the
 * NULL slots of pages[0..nr) and returns how many are then populated.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
#define tandem_alloc_pages_bulk_node(gfp, nid, nr, pages) \
	alloc_pages_bulk_node(gfp, nid, nr, pages)
#else
#define tandem_alloc_pages_bulk_node(gfp, nid, nr, pages) \
	alloc_pages_bulk_array_node(gfp, nid, nr, pages)
#endif

/*
 * "genetlink: introduce split op representation" (v6.2) changed pre_doit to
 * take a struct genl_split_ops.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define tandem_genl_ops_t struct genl_split_ops
#else
#define tandem_genl_ops_t struct genl_ops
#endif

/*
 * "genetlink: add struct genl_info to struct genl_dumpit_info" (v6.2): a
 * dump's parsed attributes moved from info->attrs to info->info.attrs.
 */
static inline struct nlattr **tandem_dump_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * "mm: return an ERR_PTR from __filemap_get_folio" (v6.3): a missing folio
 * used to be NULL. Returns the folio or NULL on every kernel.
 */
static inline struct folio *tandem_filemap_get_folio(struct address_space *mapping,
						     pgoff_t index)
{
	struct folio *folio = filemap_get_folio(mapping, index);

	return IS_ERR(folio) ? NULL : folio;
}

#endif /* _TANDEM_COMPAT_H */
