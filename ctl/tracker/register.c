// SPDX-License-Identifier: GPL-2.0
/*
 * Registering a dataset's files with a loaded tracker, under tracker_lock():
 * whether they fit (tracker_need(): the file table's room and probe bound,
 * the page words), then the dataset found or made and its new files
 * published in the file table (ftable.c) with the next ids.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "lib/files.h"
#include "lib/log.h"
#include "lib/util.h"
#include "tracker/tracker.h"
#include "tracker/internal.h"

/*
 * Files registered: the datasets' file counts add up to it, and file ids
 * are 1..that (files are never unregistered), so the next id is one more.
 * O(datasets), not a walk of the file table.
 */
static uint64_t files_registered(struct tracker *t)
{
	uint32_t key, next, *prev = NULL;
	struct tandem_trk_dataset ds;
	uint64_t n = 0;

	while (!bpf_map_get_next_key(t->datasets_fd, prev, &next)) {
		if (!bpf_map_lookup_elem(t->datasets_fd, &next, &ds))
			n += ds.files;
		key = next;
		prev = &key;
	}
	return n;
}

int tracker_need(struct tracker *t, const struct file_list *fl, struct tracker_need *n)
{
	struct tandem_trk_meta meta;
	struct ftable ft;
	uint64_t new = 0, new_pages = 0;
	__u32 zero = 0;
	int err;

	memset(n, 0, sizeof(*n));
	if (bpf_map_lookup_elem(t->meta_fd, &zero, &meta))
		return -errno;
	n->max_files = meta.max_files;
	n->max_pages = meta.max_pages;
	n->pages_set = meta.flags & TANDEM_TRK_META_PAGES_SET;
	n->registered = files_registered(t);
	/*
	 * what is registered takes no new slot and no new page word; the new
	 * files, placed as they will be, and their pages after those in use
	 */
	err = ftable_map(&ft, t->files_fd, t->fileinfo_fd);
	if (!err) {
		n->pages = ftable_pages_used(&ft, n->registered);
		err = ftable_fit(&ft, fl, &new, &new_pages);
		ftable_unmap(&ft);
	}
	if (err && err != -E2BIG)
		return err;
	n->files = n->registered + new;
	n->pages += new_pages;
	/* crowded, although there are slots enough: a larger table spreads them */
	n->probes_over = err == -E2BIG && n->files <= n->max_files;
	return err || n->files > n->max_files ||
	       (!n->pages_set && n->pages > n->max_pages) ? -E2BIG : 0;
}

static void count_present(uint32_t dataset, struct tracker_add_result *res)
{
	res->present++;
	if (res->owner != TRACKER_OWNER_MIXED)
		res->owner = !res->owner || res->owner == dataset ? dataset : TRACKER_OWNER_MIXED;
}

/*
 * The walk's files not registered yet get ids from *next_id, published in
 * the mapped table; the others are counted as present. One probe sequence
 * per file, no syscall: O(n).
 */
static int add_new(struct ftable *ft, const struct file_list *fl, uint32_t *next_id,
		   uint32_t max_pages, struct tracker_add_result *res)
{
	uint64_t next_page = ftable_pages_used(ft, *next_id - 1);
	int err = 0;

	for (size_t i = 0; i < fl->n && !err; i++) {
		uint64_t dev = tracker_kdev(fl->devs[i]);
		uint32_t had = ftable_find(ft, dev, fl->inos[i]);
		uint64_t pages = (fl->sizes[i] + TANDEM_TRK_PAGE_SIZE - 1) / TANDEM_TRK_PAGE_SIZE;
		/* past the array's words: none (--max-pages given; overflow) */
		uint64_t words = next_page >= max_pages ? 0 :
				 pages < max_pages - next_page ? pages : max_pages - next_page;

		if (had) {
			count_present(ftable_dataset(ft, had), res);
			continue;
		}
		err = ftable_add(ft, dev, fl->inos[i], *next_id, res->dataset, next_page, words);
		if (err) {
			ctl_err("tracker: cannot register files: %s%s", strerror(-err),
				err == -E2BIG ? " (file table full)" : "");
			break;
		}
		++*next_id;
		next_page += words;
		res->added++;
		res->pages += pages;
	}
	return err;
}

static int add_files(struct tracker *t, const struct file_list *fl, uint32_t *next_id,
		     struct tracker_add_result *res)
{
	struct tandem_trk_meta meta;
	struct ftable ft;
	__u32 zero = 0;
	int err = ftable_map(&ft, t->files_fd, t->fileinfo_fd);

	if (err)
		ctl_err("tracker: cannot map the file table: %s", strerror(-err));
	if (!err && bpf_map_lookup_elem(t->meta_fd, &zero, &meta))
		err = -errno;
	/* the filter first: a file in `files` always passes it */
	if (!err)
		err = ftable_filter_add(t->filter_fd, t->filter_words, fl);
	if (!err)
		err = add_new(&ft, fl, next_id, meta.max_pages, res);
	ftable_unmap(&ft);
	return err;
}

static int dataset_get_or_create(struct tracker *t, const char *name, uint32_t *id)
{
	struct tandem_trk_dataset ds = {};

	if (!tracker_dataset_find(t, name, id))
		return 0;
	if (strlen(name) >= TANDEM_TRK_NAME_LEN || !*name) {
		ctl_err("tracker: dataset name must be 1 to %d characters",
			TANDEM_TRK_NAME_LEN - 1);
		return -EINVAL;
	}
	*id = tracker_max_u32_key(t->datasets_fd) + 1;
	/* fileinfo holds a file's dataset in 16 bits (bpf/tracker.h) */
	if (*id > TANDEM_TRK_DATASET_MAX) {
		ctl_err("tracker: dataset ids are used up (%u): 'tandemctl tracker unload'", *id);
		return -E2BIG;
	}
	strncpy(ds.name, name, sizeof(ds.name) - 1);
	if (bpf_map_update_elem(t->datasets_fd, id, &ds, BPF_NOEXIST)) {
		ctl_err("tracker: cannot create dataset %s: %s", name, strerror(errno));
		return -errno;
	}
	return 0;
}

static int dataset_account(struct tracker *t, const struct tracker_add_result *res)
{
	struct tandem_trk_dataset ds;

	if (bpf_map_lookup_elem(t->datasets_fd, &res->dataset, &ds))
		return -errno;
	ds.files += res->added;
	ds.pages += res->pages;
	if (bpf_map_update_elem(t->datasets_fd, &res->dataset, &ds, BPF_EXIST))
		return -errno;
	return 0;
}

int tracker_dataset_add_list(struct tracker *t, const char *name,
			     const struct file_list *fl, struct tracker_add_result *res)
{
	uint32_t next_id;
	int err;

	memset(res, 0, sizeof(*res));
	err = dataset_get_or_create(t, name, &res->dataset);
	if (err)
		return err;
	next_id = files_registered(t) + 1;
	err = add_files(t, fl, &next_id, res);
	res->skipped = fl->skipped;
	return dataset_account(t, res) ?: err;
}

void tracker_need_print(const struct tracker_need *n, const char *name)
{
	ctl_err("tracker: the tracker loaded at %s holds at most %u files and %u pages; "
		"with dataset %s it needs %llu files (%llu registered now) and %llu pages",
		tracker_dir(), n->max_files, n->max_pages, name,
		(unsigned long long)n->files, (unsigned long long)n->registered,
		(unsigned long long)n->pages);
	if (n->probes_over)
		ctl_err("tracker: and its file table is too crowded where the new files go "
			"(a file would be further from its place than a lookup probes)");
}
