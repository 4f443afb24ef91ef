/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the tracker library only: pins.c offers it to load.c and grow.c. */
#ifndef TANDEM_CTL_TRACKER_INTERNAL_H
#define TANDEM_CTL_TRACKER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* What registering a file list needs of the loaded tracker (tracker.c). */
struct tracker_need {
	uint64_t files;		/* registered now + the list's files not yet */
	uint64_t registered;
	uint64_t pages;		/* the list's pages */
	uint32_t max_files, max_pages;	/* the loaded tracker's */
	bool pages_set;		/* its max_pages was asked for: kept */
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
