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
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/rbtree.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "uapi/tandem.h"

#define TANDEM_VERSION		"0.1.0"
/* cxl_node values besides a node id */
#define TANDEM_NODE_AUTO	(-1)
#define TANDEM_NODE_NONE	(-2)
#define TANDEM_REASON_LEN	128
/* 100 GiB/s: above any storage a prefetch could be capped against */
#define TANDEM_PREFETCH_KBPS_MAX	(100U << 20)
#define TANDEM_STEER_KBPS_MAX		(100U << 20)

/*
 * A registered file. The registry holds one reference, the steering queue
 * one while the file is queued, the worker one while it works on it. The
 * last put (process context only) unpins the path and frees after an RCU
 * grace period, because the page-cache probe looks files up under RCU.
 */
struct tandem_file {
	struct rb_node node;		/* in dataset->files, by (dev, ino) */
	struct hlist_node hash;		/* tandem_inode_hash, by inode (RCU) */
	struct list_head work;		/* on the steering queue; tandem_steer_lock */
	struct tandem_dataset *ds;	/* holds a reference on ds->kobj */
	struct path path;		/* pins the dentry and the mount */
	struct inode *inode;
	dev_t dev;
	u64 ino;
	refcount_t ref;
	/* under tandem_steer_lock */
	pgoff_t pend_start, pend_end;	/* page range to steer; start > end: none */
	unsigned int retries;		/* requeues for locked folios, since progress */
	bool queued;
	bool dead;			/* unregistered: never queue again */
	struct rcu_head rcu;
};

struct tandem_prefetch;

struct tandem_dataset {
	struct kobject kobj;		/* /sys/kernel/tandem/datasets/<id> */
	struct kobject *counters_kobj;	/* datasets/<id>/counters/ */
	u32 id;
	char name[TANDEM_NAME_MAX];
	struct rb_root files;
	u32 nr_files;
	bool dead;			/* deleted; sysfs may still be draining */
	int node;			/* own target node, or -1: tandem.cxl_node */
	atomic_t steer_queued;		/* files of this dataset on the queue/worker */
	unsigned long full_until;	/* jiffies: the target reclaimed our pages */
	atomic64_t cnt[__TANDEM_CNT_MAX];
	struct tandem_prefetch *prefetch;	/* last prefetch; tandem.lock */
};

struct tandem_state {
	struct mutex lock;		/* registry, datasets, config */
	struct xarray datasets;		/* id -> struct tandem_dataset */
	u32 nr_datasets;
	u32 nr_files;
	int cxl_node;			/* node id or TANDEM_NODE_NONE */
	char cxl_reason[TANDEM_REASON_LEN];
	bool steer;
	u32 prefetch_kbps;
	u32 steer_kbps;
	bool exiting;			/* unloading: refuse state changes */
	struct kobject *root_kobj;
	struct kobject *datasets_kobj;
};

extern struct tandem_state tandem;
extern unsigned int tandem_max_datasets;
extern unsigned int tandem_max_files;
extern atomic64_t tandem_live_objects;

/* node.c */
int tandem_node_autodetect(char *reason, size_t len);
int tandem_node_validate(int nid);
int tandem_node_set(int nid, const char **why);	/* caller holds tandem.lock */

/* registry.c */
int tandem_registry_init(void);
void tandem_registry_exit(void);
struct tandem_dataset *tandem_dataset_find(u32 id);
int tandem_dataset_add(const char *name, u32 *id);
int tandem_dataset_del(u32 id);
bool tandem_dataset_name_valid(const char *name);
u64 tandem_dataset_pages_cached(struct tandem_dataset *ds);
u64 tandem_dataset_bytes(struct tandem_dataset *ds);
struct tandem_file *tandem_file_alloc(const char *pathname, int *err);
int tandem_file_insert(struct tandem_dataset *ds, struct tandem_file *f);
void tandem_file_remove(struct tandem_dataset *ds, struct tandem_file *f);
struct tandem_file *tandem_file_next(struct tandem_dataset *ds, dev_t dev, u64 ino);

/* sysfs.c */
int tandem_sysfs_init(void);
void tandem_sysfs_exit(void);
int tandem_sysfs_dataset_add(struct tandem_dataset *ds);
void tandem_sysfs_dataset_del(struct tandem_dataset *ds);

/* steer.c */
int tandem_steer_init(void);
void tandem_steer_stop(void);		/* no new work; waits for the worker */
void tandem_steer_exit(void);
void tandem_steer_file_add(struct tandem_file *f);	/* tandem.lock held */
void tandem_steer_file_del(struct tandem_file *f);	/* tandem.lock held */
void tandem_steer_queue(struct tandem_file *f, pgoff_t start, pgoff_t end);
int tandem_dataset_target_node(struct tandem_dataset *ds);
int tandem_steer_dataset(struct tandem_dataset *ds);	/* tandem.lock held */
void tandem_dataset_node_pages(struct tandem_dataset *ds, u64 *pages, int nr);
struct workqueue_struct *tandem_workqueue(void);
void tandem_file_get(struct tandem_file *f);
void tandem_file_put(struct tandem_file *f);

/* prefetch.c */
struct tandem_prefetch_info {
	u8 state;
	u64 pages_done, pages_total, elapsed_ns;
};
int tandem_prefetch_start(struct tandem_dataset *ds, struct tandem_file **files, int n,
			  u32 kbps);	/* tandem.lock held; takes the file references */
int tandem_prefetch_cancel(struct tandem_dataset *ds);	/* tandem.lock held */
void tandem_prefetch_info(struct tandem_dataset *ds, struct tandem_prefetch_info *info);
void tandem_prefetch_release(struct tandem_dataset *ds);	/* dataset going away */
void tandem_prefetch_stop_all(void);
extern const char *const tandem_counter_names[__TANDEM_CNT_MAX];

/* netlink.c */
void tandem_notify_prefetch_done(u32 id, const struct tandem_prefetch_info *info);
int tandem_netlink_init(void);
void tandem_netlink_exit(void);

#endif /* _TANDEM_H */
