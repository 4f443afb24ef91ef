/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tandem: dataset registry, CXL node selection, and the control plane
 * (module parameters, sysfs under /sys/kernel/tandem, generic netlink).
 */
#ifndef _TANDEM_H
#define _TANDEM_H

#include <linux/atomic.h>
#include <linux/kobject.h>
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

struct tandem_file {
	struct rb_node node;		/* in dataset->files, by (dev, ino) */
	struct tandem_dataset *ds;
	struct path path;		/* pins the dentry and the mount */
	struct inode *inode;
	dev_t dev;
	u64 ino;
};

struct tandem_dataset {
	struct kobject kobj;		/* /sys/kernel/tandem/datasets/<id> */
	u32 id;
	char name[TANDEM_NAME_MAX];
	struct rb_root files;
	u32 nr_files;
	bool dead;			/* deleted; sysfs may still be draining */
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
void tandem_file_free(struct tandem_file *f);
int tandem_file_insert(struct tandem_dataset *ds, struct tandem_file *f);
void tandem_file_remove(struct tandem_dataset *ds, struct tandem_file *f);
struct tandem_file *tandem_file_next(struct tandem_dataset *ds, dev_t dev, u64 ino);

/* sysfs.c */
int tandem_sysfs_init(void);
void tandem_sysfs_exit(void);
int tandem_sysfs_dataset_add(struct tandem_dataset *ds);
void tandem_sysfs_dataset_del(struct tandem_dataset *ds);

/* netlink.c */
int tandem_netlink_init(void);
void tandem_netlink_exit(void);

#endif /* _TANDEM_H */
