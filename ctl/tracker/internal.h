/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the tracker library only: pins.c offers it to load.c and grow.c. */
#ifndef TANDEM_CTL_TRACKER_INTERNAL_H
#define TANDEM_CTL_TRACKER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* remove every pin under DIR and DIR itself; detaches the programs */
int tracker_unpin_all(const char *dir);
/*
 * A load pins everything in a staging directory next to DIR,
 * "DIR-loading-PID" (bpffs refuses names with a dot), and renames it to DIR when done, so DIR is either
 * absent or complete. Writes the staging path for this process.
 */
void tracker_staging_dir(const char *dir, char *buf, size_t len);
/*
 * What an interrupted load left: staging directories of processes that are
 * gone, and DIR itself when it holds pins but no meta (a load by a version
 * that pinned in place); only a directory that holds nothing but names a
 * load pins (a pin directory set to hold other pins is left alone). Returns
 * how many it removed.
 */
int tracker_remove_partial(const char *dir);
/* the maps a load pins: what userspace needs after the loading process exits */
extern const char *const tracker_pinned_maps[];
extern const size_t tracker_npinned_maps;
/* a name a load pins: one of its maps, or link_<program> */
bool tracker_pin_name_ours(const char *name);

/* A load in steps (load.c), so that tracker_grow() can copy between them. */
struct tracker_bpf;
struct tandem_trk_meta;
struct tracker_load_opts;
int tracker_load_objects(const struct tracker_load_opts *o, struct tracker_bpf **skel,
			 struct tandem_trk_meta *meta);
/* pin the maps in STAGE (made) */
int tracker_load_pin_maps(struct tracker_bpf *skel, const char *stage);
/* write meta (its pages_tracked kept) and attach every program, links pinned in STAGE */
int tracker_load_attach(struct tracker_bpf *skel, const char *stage,
			struct tandem_trk_meta *meta);
void tracker_load_destroy(struct tracker_bpf *skel);

/*
 * The file table (bpf/tracker.h: `files` and the datasets in `fileinfo`)
 * mapped into this process (ftable.c). Writers hold tracker_lock().
 */
struct tandem_trk_slot;
struct tandem_trk_fileinfo;
struct file_list;
struct ftable {
	struct tandem_trk_slot *slot;
	struct tandem_trk_fileinfo *fi;	/* NULL when mapped without it */
	uint32_t nslots;
	uint32_t nfi;			/* max_files + 1 */
	size_t slot_len, fi_len;
};
/* largest u32 key of a hash map keyed by u32 (0 when empty; tracker.c) */
uint32_t tracker_max_u32_key(int fd);
/* kernel dev_t encoding of a userspace st_dev, as inode->i_sb->s_dev has it */
uint64_t tracker_kdev(dev_t dev);
/* set FL's files' bits in the filter (FILTER_WORDS words) the BPF hooks test first */
int ftable_filter_add(int filter_fd, uint32_t filter_words, const struct file_list *fl);
/* FILEINFO_FD < 0: the slots only */
int ftable_map(struct ftable *ft, int files_fd, int fileinfo_fd);
void ftable_unmap(struct ftable *ft);
/* the file_id of (DEV, INO), 0 when not registered */
uint32_t ftable_find(const struct ftable *ft, uint64_t dev, uint64_t ino);
/* the dataset of file ID (0: none) */
uint32_t ftable_dataset(const struct ftable *ft, uint32_t id);
/* words of `pages` handed out to files 1..LAST_ID (their pbase + npages) */
uint64_t ftable_pages_used(const struct ftable *ft, uint32_t last_id);
/*
 * Publish (DEV, INO) as file ID of DATASET, its pages' state at words
 * PBASE .. PBASE + NPAGES - 1 of `pages` (DATASET 0: leave fileinfo alone):
 * -EEXIST when it is there, -E2BIG when its slot would be further from
 * its home than a lookup probes (or ID is past fileinfo).
 */
int ftable_add(struct ftable *ft, uint64_t dev, uint64_t ino, uint32_t id, uint32_t dataset,
	       uint32_t pbase, uint32_t npages);
/*
 * How many of FL's files are not registered (*NEW, with *NEW_PAGES pages),
 * and whether all of them
 * fit within the probe bound, added in FL's order (-E2BIG when not, *NEW
 * counted all the same): what ftable_add() will then do, checked on a
 * bitmap of slots, not a copy of the table.
 */
int ftable_fit(const struct ftable *ft, const struct file_list *fl, uint64_t *new,
	       uint64_t *new_pages);

/* What registering a file list needs of the loaded tracker (register.c). */
struct tracker_need {
	uint64_t files;		/* registered now + the list's files not yet */
	uint64_t registered;
	uint64_t pages;		/* words of `pages` in use + the list's new files' pages */
	uint32_t max_files, max_pages;	/* the loaded tracker's */
	bool pages_set;		/* its max_pages was asked for: kept */
	/* a new file would sit further from its slot's home than a lookup probes */
	bool probes_over;
};
struct tracker;
struct file_list;
struct tracker_add_result;
/* under tracker_lock(): 0 when it fits, -E2BIG when not (*n filled either way) */
int tracker_need(struct tracker *t, const struct file_list *fl, struct tracker_need *n);
void tracker_need_print(const struct tracker_need *n, const char *name);
/* register FL as NAME, under tracker_lock(), after tracker_need() said it fits */
int tracker_dataset_add_list(struct tracker *t, const char *name,
			     const struct file_list *fl, struct tracker_add_result *res);
/*
 * Reload the tracker T has open (and locked) with maps for N, every map's
 * content copied; T is reopened on the new maps. -EBUSY (with the error
 * line) while a tracked job runs. *gap_s: how long no program was attached.
 */
int tracker_grow(struct tracker *t, const struct tracker_need *n, double *gap_s);

#endif
