/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tandem.ko from userspace: its generic-netlink family (Documentation/
 * netlink/tandem.md) as C calls. A connection (struct tnl) carries its own
 * socket and the kernel's last error text, so a long-running caller holds
 * one per thread. Every request returns 0 or -errno; a kernel error is
 * printed as one line "kernel reports: <extack message>" (lib/log.h).
 *
 *   module status and knobs   tmod_stats_get, tmod_config_set
 *   datasets                  resolve, find, find-or-create, add files,
 *                             delete, info, files, state (residency, counters)
 *   placement                 steer, prefetch, prefetch cancel
 *   printing                  dataset_state_print (text/JSON, lib/out.h)
 */
#ifndef TANDEM_CTL_MODULE_H
#define TANDEM_CTL_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/tandem.h>	/* kmod/uapi/linux/tandem.h (-Ikmod/uapi) */

#include "lib/files.h"

/* ---- connection ---- */

struct tnl;

/*
 * Connect and resolve the family. -ENOENT when tandem.ko is not loaded
 * (printed unless quiet), -EIO when no netlink socket can be had.
 */
int tnl_open(struct tnl **nl, bool quiet);
void tnl_close(struct tnl *nl);

/* ---- module ---- */

struct tmod_stats {
	char version[32], reason[160];	/* reason: why cxl_node is what it is */
	int32_t cxl_node;		/* -1: none */
	uint8_t steer;
	uint32_t prefetch_kbps, steer_kbps;	/* the knobs: KiB/s, 0 = unlimited */
	uint32_t nr_datasets, nr_files, max_datasets, max_files;
	uint64_t live_objects;
};

int tmod_stats_get(struct tnl *nl, struct tmod_stats *s);
/* Steering is on and there is a CXL node: a registered dataset will be steered. */
bool tmod_steers(const struct tmod_stats *s);

/* config set: only the has_ fields are sent */
struct tmod_config {
	bool has_node, has_steer, has_kbps, has_steer_kbps;
	int32_t node;			/* -1 auto, -2 none */
	uint8_t steer;
	uint32_t kbps, steer_kbps;	/* KiB/s (the knobs' ABI unit) */
};

int tmod_config_set(struct tnl *nl, const struct tmod_config *c);

/* ---- datasets ---- */

struct dataset_info {
	uint32_t id, nfiles;
	char name[TANDEM_NAME_MAX];
	uint64_t bytes, pages_cached;
};

struct dataset_file {
	const char *path;
	bool has_dev, has_ino, has_pages;
	uint64_t dev, ino, bytes, pages_cached;
};

#define DATASET_MAX_NODES 64

/* A dataset's residency and counters, from DATASET_GET. */
struct dataset_state {
	uint32_t id;
	char name[TANDEM_NAME_MAX];
	uint64_t pages_cached;
	int32_t node;			/* own target node, -1 = cxl_node */
	uint32_t steer_pending;
	uint64_t cnt[__TANDEM_CNT_MAX];
	uint64_t node_pages[DATASET_MAX_NODES];
	uint8_t pf_state;
	uint64_t pf_done, pf_total, pf_elapsed_ns;
};

/* A name tandem.ko takes ([A-Za-z0-9._-], 1..63): given, else dir's last component. */
void dataset_name_make(const char *given, const char *dir, char *name, size_t len);
/* "ID|NAME" -> id (a number is an id); -ENOENT printed when there is none */
int dataset_resolve(struct tnl *nl, const char *arg, uint32_t *id);
/* Connect and resolve arg: how a per-dataset command starts (nl is closed on failure). */
int dataset_open(struct tnl **nl, const char *arg, uint32_t *id);
/* the dataset called name; -ENOENT (not printed) when there is none */
int dataset_find(struct tnl *nl, const char *name, uint32_t *id);
int dataset_create(struct tnl *nl, const char *name, uint32_t *id);
/* find, else create (*created says which) */
int dataset_find_or_create(struct tnl *nl, const char *name, uint32_t *id, bool *created);
/* register fl's paths (absolute) with dataset id, in batches */
int dataset_add_files(struct tnl *nl, uint32_t id, const struct file_list *fl,
		      uint32_t *added, uint32_t *dups);
int dataset_del(struct tnl *nl, uint32_t id);
int dataset_info_get(struct tnl *nl, uint32_t id, struct dataset_info *ds);
/* fn for every dataset (or every file of id); its error ends the walk */
int dataset_each(struct tnl *nl, int (*fn)(void *arg, const struct dataset_info *ds),
		 void *arg);
int dataset_files_each(struct tnl *nl, uint32_t id,
		       int (*fn)(void *arg, const struct dataset_file *f), void *arg);
int dataset_state_get(struct tnl *nl, uint32_t id, struct dataset_state *st);
int dataset_state_each(struct tnl *nl, int (*fn)(void *arg, const struct dataset_state *st),
		       void *arg);

const char *dataset_prefetch_state_name(uint8_t state);	/* TANDEM_PREFETCH_* */
/* one dataset's residency, text or a JSON object under key */
void dataset_state_print(const char *key, const struct dataset_state *st);
/* every dataset's residency: JSON array "datasets", text one block each */
int dataset_state_print_all(struct tnl *nl);

/* ---- placement ---- */

/* migrate the dataset's cached pages to node (has_node), else to cxl_node */
int dataset_steer(struct tnl *nl, uint32_t id, bool has_node, int32_t node);

struct dataset_prefetch {
	uint32_t id;
	bool has_kbps;
	uint32_t kbps;			/* KiB/s (the ABI unit), 0 = unlimited */
	const struct file_list *files;	/* in order; NULL or empty: the whole dataset */
};

int dataset_prefetch(struct tnl *nl, const struct dataset_prefetch *p);
int dataset_prefetch_cancel(struct tnl *nl, uint32_t id);

#endif
