/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences of tandem.ko, all in one place (the only place
 * LINUX_VERSION_CODE is used; checkpatch is told so). The module is
 * built and tested against Debian 12's 6.1; each entry names the change that
 * makes newer kernels differ.
 */
#ifndef _TANDEM_COMPAT_H
#define _TANDEM_COMPAT_H

#include <linux/pagemap.h>
#include <linux/version.h>

/*
 * "filemap: Convert replace_page_cache_page() to replace_page_cache_folio()"
 * (v6.2 merge window) replaced the page-based export used here on 6.1.
 * Not compiled here: newer kernels are untested.
 */
static inline void tandem_replace_page_cache(struct folio *old, struct folio *new)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	replace_page_cache_folio(old, new);
#else
	replace_page_cache_page(&old->page, &new->page);
#endif
}

/*
 * "genetlink: introduce split op representation" (v6.2) changed pre_doit to
 * take a struct genl_split_ops.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define tandem_genl_ops_t struct genl_split_ops
#else
#define tandem_genl_ops_t struct genl_ops
#endif

#endif /* _TANDEM_COMPAT_H */
