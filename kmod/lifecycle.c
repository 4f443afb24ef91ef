// SPDX-License-Identifier: GPL-2.0
/*
 * A dataset's and a file's life across the module's layers: adding a
 * dataset gives it its registry id and its sysfs directory; adding a file
 * links it in the dataset's rbtree and in steering's inode hash; deleting
 * a dataset unhooks its files from steering, waits for its prefetch, drops
 * its files and removes its directory. Above registry.c, steer.c,
 * prefetch.c and sysfs.c, which call nothing here; netlink.c and core.c
 * call it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rbtree.h>
#include <linux/xarray.h>

#include "tandem.h"

/* Returns 0 and the new id, -EINVAL, -EEXIST (name taken), -ENOSPC (limit). */
int tandem_dataset_add(const char *name, u32 *id)
{
	struct tandem_dataset *ds;
	int err;

	if (!tandem_dataset_name_valid(name))
		return -EINVAL;
	ds = tandem_dataset_alloc(name);
	if (!ds)
		return -ENOMEM;
	mutex_lock(&tandem.lock);
	err = tandem_dataset_id_alloc(ds);
	if (err)
		goto out_unlock;
	err = tandem_sysfs_dataset_add(ds);	/* no directory on error */
	if (err) {
		xa_erase(&tandem.datasets, ds->id);
		goto out_unlock;
	}
	WRITE_ONCE(tandem.nr_datasets, tandem.nr_datasets + 1);
	*id = ds->id;
	mutex_unlock(&tandem.lock);
	return 0;

out_unlock:
	mutex_unlock(&tandem.lock);
	tandem_dataset_put(ds);
	return err;
}

static void tandem_files_put(struct rb_root *files)
{
	struct tandem_file *f, *next;

	rbtree_postorder_for_each_entry_safe(f, next, files, node)
		tandem_file_put(f);
	*files = RB_ROOT;
}

int tandem_dataset_del(u32 id)
{
	struct tandem_dataset *ds;
	struct rb_root files;
	struct rb_node *n;

	mutex_lock(&tandem.lock);
	ds = xa_erase(&tandem.datasets, id);
	if (!ds) {
		mutex_unlock(&tandem.lock);
		return -ENOENT;
	}
	ds->dead = true;
	for (n = rb_first(&ds->files); n; n = rb_next(n))
		tandem_steer_file_del(rb_entry(n, struct tandem_file, node));
	files = ds->files;
	ds->files = RB_ROOT;
	WRITE_ONCE(tandem.nr_files, tandem.nr_files - ds->nr_files);
	ds->nr_files = 0;
	WRITE_ONCE(tandem.nr_datasets, tandem.nr_datasets - 1);
	mutex_unlock(&tandem.lock);

	/*
	 * Outside the lock: path_put() may sleep, a prefetch is waited for,
	 * and removing the sysfs directory waits for readers that take the
	 * lock. The files' and the directory's references keep ds alive.
	 */
	tandem_prefetch_release(ds);
	tandem_files_put(&files);
	tandem_sysfs_dataset_del(ds);
	tandem_dataset_put(ds);
	return 0;
}

/* Unload: every dataset goes, as by tandem_dataset_del(). */
void tandem_dataset_del_all(void)
{
	struct tandem_dataset *ds;
	unsigned long id;

	xa_for_each(&tandem.datasets, id, ds)
		tandem_dataset_del(id);
}

/* 0, -EEXIST (already in the dataset), -ENOSPC (max_files) or -ENOMEM. */
int tandem_file_insert(struct tandem_dataset *ds, struct tandem_file *f)
{
	struct rb_node **p, *parent;
	int err;

	lockdep_assert_held(&tandem.lock);
	p = tandem_file_slot(ds, f, &parent);
	if (!p)
		return -EEXIST;
	if (ds->nr_files >= tandem_max_files)
		return -ENOSPC;
	/* the probes may find f from here on: f->ds first */
	f->ds = ds;
	err = tandem_steer_file_add(f);
	if (err) {
		f->ds = NULL;
		return err;
	}
	rb_link_node(&f->node, parent, p);
	rb_insert_color(&f->node, &ds->files);
	tandem_dataset_get(ds);
	ds->nr_files++;
	WRITE_ONCE(tandem.nr_files, tandem.nr_files + 1);
	return 0;
}

/* Undo tandem_file_insert() (a batch that could not be added whole); the caller puts f. */
void tandem_file_remove(struct tandem_dataset *ds, struct tandem_file *f)
{
	lockdep_assert_held(&tandem.lock);
	tandem_steer_file_del(f);
	rb_erase(&f->node, &ds->files);
	RB_CLEAR_NODE(&f->node);
	ds->nr_files--;
	WRITE_ONCE(tandem.nr_files, tandem.nr_files - 1);
}
