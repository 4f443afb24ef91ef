/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tandem: dataset registry, CXL node selection, and the control plane
 * (module parameters, sysfs under /sys/kernel/tandem, generic netlink).
 */
#ifndef _TANDEM_H
#define _TANDEM_H

#include <linux/atomic.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rhashtable-types.h>
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/rbtree.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "uapi/linux/tandem.h"

#define TANDEM_VERSION		"0.2.0"
/* cxl_node values besides a node id */
#define TANDEM_NODE_AUTO	(-1)
#define TANDEM_NODE_NONE	(-2)
#define TANDEM_REASON_LEN	128
/* 100 GiB/s: above any storage a prefetch could be capped against */
#define TANDEM_PREFETCH_KBPS_MAX	(100U << 20)
#define TANDEM_STEER_KBPS_MAX		(100U << 20)

/*
 * Locks, outermost first:
 *   tandem.lock (mutex)      the registry: the datasets xarray, each
 *                            dataset's files rbtree and counts, ->dead,
 *                            ->prefetch; config changes (cxl_node, and
 *                            ->node of a dataset); tandem.exiting
 *   tandem_steer_lock (spin) the steering queue (steer.c) and the fields
 *                            of a file marked "steer lock" below
 * Lockless readers (the page-cache probes under RCU, sysfs shows, the
 * steering worker) use READ_ONCE on the fields marked "READ_ONCE".
 *
 * A registered file. The dataset's rbtree holds one reference, the
 * steering queue one while the file is queued, the worker and prefetch one
 * each while they use it, a walk (tandem_dataset_walk()) one per file of
 * its batch. The last put (process context only) unpins the path, drops
 * the dataset reference and frees the file after an RCU grace period,
 * because the page-cache probes find files under RCU.
 */
struct tandem_file {
	struct rb_node node;		/* in dataset->files, by (dev, ino); tandem.lock */
	struct rhlist_head hash;	/* tandem_inode_hash, by inode (RCU); tandem.lock */
	struct list_head work;		/* on the steering queue; steer lock */
	struct tandem_dataset *ds;	/* holds a reference; set once at insertion */
	struct path path;		/* pins the dentry and the mount */
	struct inode *inode;
	dev_t dev;
	u64 ino;
	refcount_t ref;
	pgoff_t pend_start, pend_end;	/* page range to steer, start > end: none; steer lock */
	unsigned int retries;		/* requeues for locked folios since progress; worker only */
	bool queued;			/* steer lock */
	bool dead;			/* unregistered, never queued again; steer lock, READ_ONCE */
	struct rcu_head rcu;
};

struct tandem_prefetch;
struct tandem_dataset_sysfs;

/*
 * A dataset, the runtime object. References: the registry (from add to
 * del), each file, a prefetch, its sysfs directory, and anyone who uses it
 * after dropping tandem.lock (netlink replies). The last put frees it after
 * an RCU grace period: a probe that found one of its files under RCU may
 * still read it. Its sysfs directory is a separate object
 * (struct tandem_dataset_sysfs, sysfs.c) that only points here.
 */
struct tandem_dataset {
	refcount_t ref;
	u32 id;				/* constant */
	char name[TANDEM_NAME_MAX];	/* constant */
	struct rb_root files;		/* tandem.lock */
	u32 nr_files;			/* tandem.lock */
	bool dead;			/* deleted, files gone; tandem.lock */
	int node;			/* own target, -1: tandem.cxl_node; tandem.lock, READ_ONCE */
	atomic_t steer_queued;		/* files queued or being steered (steer.c) */
	unsigned long full_until;	/* jiffies: the target reclaimed our pages; READ/WRITE_ONCE */
	atomic64_t cnt[__TANDEM_CNT_MAX];
	struct tandem_prefetch *prefetch;	/* last prefetch; tandem.lock */
	struct tandem_dataset_sysfs *sysfs;	/* datasets/<id>/; set at add, tandem.lock */
	struct rcu_head rcu;
};

/* Knobs are written under tandem.lock and read with READ_ONCE (probes, workers). */
struct tandem_state {
	struct mutex lock;		/* see the top of the file */
	struct xarray datasets;		/* id -> dataset (registry reference); tandem.lock */
	u32 nr_datasets;		/* tandem.lock, READ_ONCE */
	u32 nr_files;			/* tandem.lock, READ_ONCE */
	int cxl_node;			/* node id or TANDEM_NODE_NONE; tandem.lock, READ_ONCE */
	char cxl_reason[TANDEM_REASON_LEN];	/* tandem.lock */
	bool steer;			/* tandem.lock, READ_ONCE */
	u32 prefetch_kbps;		/* tandem.lock, READ_ONCE */
	u32 steer_kbps;			/* tandem.lock, READ_ONCE */
	bool exiting;			/* unloading: refuse state changes; tandem.lock, READ_ONCE */
	struct kobject *root_kobj;
	struct kobject *datasets_kobj;
};

extern struct tandem_state tandem;
extern unsigned int tandem_max_datasets;
extern unsigned int tandem_max_files;
extern atomic64_t tandem_live_objects;

/* cxl_node.c */
int tandem_node_autodetect(char *reason, size_t len);
int tandem_node_validate(int nid);
int tandem_node_set(int nid, const char **why);	/* caller holds tandem.lock */

/* headroom.c: memory kept free on the CPU nodes from movable allocations */
int tandem_headroom_init(void);
void tandem_headroom_exit(void);
void tandem_headroom_apply(void);	/* again, after the CXL node changed; takes its own lock */

/*
 * The files, bottom to top: each calls only the ones listed before it (and
 * cxl_node.c, headroom.c, compat.h):
 *   registry.c   datasets and files as objects: ids, references, lookups, walks
 *   steer.c      steering (the page-cache probes and the worker)
 *   prefetch.c   prefetch; its "done" event reaches netlink through a callback
 *   sysfs.c      /sys/kernel/tandem
 *   lifecycle.c  adding and deleting datasets and files across the layers above
 *   netlink.c    the generic netlink family
 *   core.c       init and exit
 */

/* registry.c */
int tandem_registry_init(void);
void tandem_registry_exit(void);	/* after tandem_dataset_del_all() */
struct tandem_dataset *tandem_dataset_find(u32 id);	/* tandem.lock held */
void tandem_dataset_get(struct tandem_dataset *ds);
void tandem_dataset_put(struct tandem_dataset *ds);
bool tandem_dataset_name_valid(const char *name);
struct tandem_dataset *tandem_dataset_alloc(const char *name);
int tandem_dataset_id_alloc(struct tandem_dataset *ds);	/* tandem.lock held */
void tandem_file_get(struct tandem_file *f);
void tandem_file_put(struct tandem_file *f);

/* What a dataset's files hold now, from tandem_dataset_usage(). */
struct tandem_usage {
	u64 bytes;		/* sum of file sizes */
	u64 pages_cached;	/* pages in the page cache (mapping->nrpages) */
	u64 *node_pages;	/* [nr_node_ids] cached pages per node, or NULL: not walked */
};
int tandem_dataset_walk(struct tandem_dataset *ds,
			void (*fn)(struct tandem_file *f, void *arg), void *arg);
void tandem_dataset_usage(struct tandem_dataset *ds, struct tandem_usage *u);
struct tandem_file *tandem_file_alloc(const char *pathname, int *err);
struct rb_node **tandem_file_slot(struct tandem_dataset *ds, struct tandem_file *f,
				  struct rb_node **parent);	/* tandem.lock held */
struct tandem_file *tandem_file_next(struct tandem_dataset *ds, dev_t dev, u64 ino);

/* sysfs.c */
int tandem_sysfs_init(void);
void tandem_sysfs_exit(void);
int tandem_sysfs_dataset_add(struct tandem_dataset *ds);
void tandem_sysfs_dataset_del(struct tandem_dataset *ds);
extern const char *const tandem_counter_names[__TANDEM_CNT_MAX];

/* steer.c */
int tandem_steer_init(void);
void tandem_steer_stop(void);		/* no new work; waits for the worker */
void tandem_steer_exit(void);
int tandem_steer_file_add(struct tandem_file *f);	/* tandem.lock held */
void tandem_steer_file_del(struct tandem_file *f);	/* tandem.lock held */
int tandem_dataset_target_node(struct tandem_dataset *ds);
int tandem_steer_dataset(struct tandem_dataset *ds);	/* tandem.lock held */
struct workqueue_struct *tandem_workqueue(void);

/* prefetch.c */
struct tandem_prefetch_info {
	u8 state;
	u64 pages_done, pages_total, elapsed_ns;
};
int tandem_prefetch_start(struct tandem_dataset *ds, struct tandem_file **files, int n,
			  u32 kbps);	/* tandem.lock held; takes the file references */
int tandem_prefetch_cancel(struct tandem_dataset *ds);	/* tandem.lock held */
void tandem_prefetch_info(struct tandem_dataset *ds,
			  struct tandem_prefetch_info *info);	/* tandem.lock held */
void tandem_prefetch_release(struct tandem_dataset *ds);	/* dataset deleted; takes tandem.lock */
void tandem_prefetch_stop_all(void);
/* who hears of a prefetch that ended (netlink.c's event), NULL: nobody; set at init */
typedef void (*tandem_prefetch_done_fn)(u32 id, const struct tandem_prefetch_info *info);
void tandem_prefetch_set_done(tandem_prefetch_done_fn fn);

/* lifecycle.c */
int tandem_dataset_add(const char *name, u32 *id);
int tandem_dataset_del(u32 id);
void tandem_dataset_del_all(void);
int tandem_file_insert(struct tandem_dataset *ds, struct tandem_file *f);
void tandem_file_remove(struct tandem_dataset *ds, struct tandem_file *f);

/* netlink.c */
int tandem_netlink_init(void);
void tandem_netlink_exit(void);

#endif /* _TANDEM_H */
