// SPDX-License-Identifier: GPL-2.0
/*
 * The tracker's file table, mapped into this process, and its filter: `files`, the
 * open-addressed table of slots, and `fileinfo`, which holds each file's
 * dataset (bpf/tracker.h). tandemctl looks files up and publishes new ones
 * with loads and stores, no syscall per file; it writes under
 * tracker_lock() while the BPF programs read, in the order tracker.h gives
 * (dataset, ino and dev, then file_id with a release store), so a program
 * never sees a file with another file's id or dataset.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "../../bpf/tracker.h"
#include "lib/files.h"
#include "lib/log.h"
#include "tracker/internal.h"

uint64_t tracker_kdev(dev_t dev)
{
	/* MKDEV() of include/linux/kdev_t.h: 12-bit major over 20-bit minor */
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

static int map_array(int fd, size_t vsize, void **p, uint32_t *n, size_t *len)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	size_t page = sysconf(_SC_PAGESIZE);

	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		return -errno;
	if (info.value_size != vsize || !(info.map_flags & BPF_F_MMAPABLE) || !info.max_entries)
		return -EPROTO;
	*len = ((size_t)info.max_entries * vsize + page - 1) / page * page;
	*p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*p == MAP_FAILED) {
		*p = NULL;
		return -errno;
	}
	*n = info.max_entries;
	return 0;
}

int ftable_map(struct ftable *ft, int files_fd, int fileinfo_fd)
{
	int err;

	memset(ft, 0, sizeof(*ft));
	err = map_array(files_fd, sizeof(*ft->slot), (void **)&ft->slot, &ft->nslots,
			&ft->slot_len);
	if (!err && fileinfo_fd >= 0)
		err = map_array(fileinfo_fd, sizeof(*ft->fi), (void **)&ft->fi, &ft->nfi,
				&ft->fi_len);
	if (err)
		ftable_unmap(ft);
	return err;
}

void ftable_unmap(struct ftable *ft)
{
	if (ft->slot)
		munmap(ft->slot, ft->slot_len);
	if (ft->fi)
		munmap(ft->fi, ft->fi_len);
	memset(ft, 0, sizeof(*ft));
}

/*
 * Where (DEV, INO) is in SLOT[N], as the BPF lookup searches: 0 and *AT
 * its slot when there, -ENOENT and *AT the free slot it would take when
 * not (USED, when given, marks slots taken beyond the table), -E2BIG when
 * it is not there and would need more probes than a lookup makes.
 */
static int probe(const struct tandem_trk_slot *slot, uint32_t n, const uint64_t *used,
		 uint64_t dev, uint64_t ino, uint32_t *at)
{
	uint32_t i = tandem_trk_slot_home(tandem_trk_filter_hash(dev, ino), n);

	for (uint32_t k = 0; k < TANDEM_TRK_FILE_PROBES && k < n; k++) {
		const struct tandem_trk_slot *s = &slot[i];

		if (s->file_id && s->ino == ino && s->dev == dev) {
			*at = i;
			return 0;
		}
		if (!s->file_id && !(used && (used[i / 64] >> (i % 64) & 1))) {
			*at = i;
			return -ENOENT;
		}
		i = i + 1 < n ? i + 1 : 0;
	}
	return -E2BIG;
}

uint32_t ftable_find(const struct ftable *ft, uint64_t dev, uint64_t ino)
{
	uint32_t at;

	return probe(ft->slot, ft->nslots, NULL, dev, ino, &at) ? 0 : ft->slot[at].file_id;
}

uint32_t ftable_dataset(const struct ftable *ft, uint32_t id)
{
	return id < ft->nfi ? ft->fi[id].dataset : 0;
}

uint64_t ftable_pages_used(const struct ftable *ft, uint32_t last_id)
{
	const struct tandem_trk_fileinfo *fi;

	if (!last_id || last_id >= ft->nfi)
		return 0;
	fi = &ft->fi[last_id];
	return (uint64_t)fi->pbase + fi->npages;
}

int ftable_add(struct ftable *ft, uint64_t dev, uint64_t ino, uint32_t id, uint32_t dataset,
	       uint32_t pbase, uint32_t npages)
{
	struct tandem_trk_slot *s;
	uint32_t at;
	int err = probe(ft->slot, ft->nslots, NULL, dev, ino, &at);

	if (err != -ENOENT)
		return err ?: -EEXIST;
	if (dataset) {
		if (id >= ft->nfi)
			return -E2BIG;
		/* the programs read these only once the slot is out */
		__atomic_store_n(&ft->fi[id].pbase, pbase, __ATOMIC_RELAXED);
		__atomic_store_n(&ft->fi[id].npages, npages, __ATOMIC_RELAXED);
		__atomic_store_n(&ft->fi[id].dataset, dataset, __ATOMIC_RELAXED);
	}
	s = &ft->slot[at];
	s->ino = ino;
	s->dev = dev;
	/* the release orders fileinfo, ino and dev before the id */
	__atomic_store_n(&s->file_id, id, __ATOMIC_RELEASE);
	return 0;
}

int ftable_fit(const struct ftable *ft, const struct file_list *fl, uint64_t *new,
	       uint64_t *new_pages)
{
	uint64_t *used = calloc(ft->nslots / 64 + 1, sizeof(*used));
	bool over = false;
	uint32_t at;
	int err;

	*new = 0;
	*new_pages = 0;
	if (!used)
		return -ENOMEM;
	for (size_t i = 0; i < fl->n; i++) {
		err = probe(ft->slot, ft->nslots, used, tracker_kdev(fl->devs[i]), fl->inos[i], &at);
		if (err == -ENOENT)
			used[at / 64] |= 1ULL << (at % 64);
		/* no room within the bound: still counted, so *NEW is exact */
		over |= err == -E2BIG;
		*new += err != 0;
		if (err)
			*new_pages += (fl->sizes[i] + TANDEM_TRK_PAGE_SIZE - 1) / TANDEM_TRK_PAGE_SIZE;
	}
	free(used);
	return over ? -E2BIG : 0;
}

/*
 * Set every file's bit in the filter the BPF hooks test first (tracker.h):
 * the filter read whole, the bits set here, written back whole (a batch
 * each way; callers hold tracker_lock(), the BPF side only reads it).
 */
int ftable_filter_add(int filter_fd, uint32_t filter_words, const struct file_list *fl)
{
	__u32 n = filter_words, *idx = calloc(n, sizeof(*idx));
	__u64 *words = calloc(n, sizeof(*words));
	int err = idx && words ? 0 : -ENOMEM;

	for (__u32 w = 0; w < n && idx; w++)
		idx[w] = w;
	/* an array's keys are its indices: one lookup per word, batched */
	if (!err && bpf_map_lookup_batch(filter_fd, NULL, &(__u32){ 0 }, idx, words, &n, NULL) &&
	    errno != ENOENT)
		err = -errno;
	for (size_t i = 0; !err && i < fl->n; i++) {
		__u64 h = tandem_trk_filter_hash(tracker_kdev(fl->devs[i]), fl->inos[i]);

		words[TANDEM_TRK_FILTER_WORD(h, filter_words)] |= 1ULL << TANDEM_TRK_FILTER_BIT(h);
	}
	n = filter_words;
	if (!err && bpf_map_update_batch(filter_fd, idx, words, &n, NULL))
		err = -errno;
	if (err)
		ctl_err("tracker: cannot set the files filter: %s", strerror(-err));
	free(idx);
	free(words);
	return err;
}
