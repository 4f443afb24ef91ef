// SPDX-License-Identifier: GPL-2.0
/*
 * Dataset registry: datasets by id (xarray), files of a dataset in an rbtree
 * keyed by (dev, ino) so a file is registered once per dataset however many
 * paths name it. A file pins its path (dentry + mount): the inode and its page
 * cache stay valid while registered, and unmounting the filesystem is refused
 * (EBUSY) until the dataset is deleted, instead of leaving busy inodes behind.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/ctype.h>
#include <linux/string.h>

#include "tandem.h"

static struct kmem_cache *tandem_file_cache;
static u32 tandem_next_id;

int tandem_registry_init(void)
{
	tandem_file_cache = KMEM_CACHE(tandem_file, 0);
	return tandem_file_cache ? 0 : -ENOMEM;
}

void tandem_file_get(struct tandem_file *f)
{
	refcount_inc(&f->ref);
}

static void tandem_file_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(tandem_file_cache, container_of(rcu, struct tandem_file, rcu));
}

/* Process context only: the last put unpins the path. */
void tandem_file_put(struct tandem_file *f)
{
	if (!refcount_dec_and_test(&f->ref))
		return;
	path_put(&f->path);
	if (f->ds)
		kobject_put(&f->ds->kobj);
	/* the page-cache probe may still be looking at it under RCU */
	call_rcu(&f->rcu, tandem_file_free_rcu);
	atomic64_dec(&tandem_live_objects);
}

struct tandem_dataset *tandem_dataset_find(u32 id)
{
	lockdep_assert_held(&tandem.lock);
	return xa_load(&tandem.datasets, id);
}

bool tandem_dataset_name_valid(const char *name)
{
	size_t i, len = strlen(name);

	if (!len || len >= TANDEM_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(name[i]) && !strchr("._-", name[i]))
			return false;
	return true;
}

static bool tandem_dataset_name_taken(const char *name)
{
	struct tandem_dataset *ds;
	unsigned long id;

	xa_for_each(&tandem.datasets, id, ds)
		if (!strcmp(ds->name, name))
			return true;
	return false;
}

/* Returns 0 and the new id, -EINVAL, -EEXIST (name taken), -ENOSPC (limit). */
int tandem_dataset_add(const char *name, u32 *id)
{
	struct tandem_dataset *ds;
	int err;

	if (!tandem_dataset_name_valid(name))
		return -EINVAL;
	ds = kzalloc(sizeof(*ds), GFP_KERNEL);
	if (!ds)
		return -ENOMEM;
	atomic64_inc(&tandem_live_objects);
	strscpy(ds->name, name, sizeof(ds->name));
	ds->files = RB_ROOT;
	ds->node = -1;
	ds->full_until = jiffies;

	mutex_lock(&tandem.lock);
	err = -ENOSPC;
	if (tandem.nr_datasets >= tandem_max_datasets)
		goto out_free;
	err = -EEXIST;
	if (tandem_dataset_name_taken(name))
		goto out_free;
	/* cyclic ids: a deleted dataset's id is not handed out again at once */
	err = xa_alloc_cyclic(&tandem.datasets, &ds->id, ds, XA_LIMIT(1, INT_MAX),
			      &tandem_next_id, GFP_KERNEL);
	if (err < 0)
		goto out_free;
	err = tandem_sysfs_dataset_add(ds);	/* owns ds from here on */
	if (err) {
		xa_erase(&tandem.datasets, ds->id);
		mutex_unlock(&tandem.lock);
		return err;
	}
	tandem.nr_datasets++;
	*id = ds->id;
	mutex_unlock(&tandem.lock);
	return 0;

out_free:
	mutex_unlock(&tandem.lock);
	kfree(ds);
	atomic64_dec(&tandem_live_objects);
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
	tandem.nr_files -= ds->nr_files;
	tandem.nr_datasets--;
	mutex_unlock(&tandem.lock);

	/*
	 * Outside the lock: path_put() may sleep, and removing the sysfs
	 * directory waits for readers that take the lock.
	 */
	tandem_prefetch_release(ds);
	tandem_files_put(&files);
	tandem_sysfs_dataset_del(ds);
	return 0;
}

void tandem_registry_exit(void)
{
	struct tandem_dataset *ds;
	unsigned long id;

	xa_for_each(&tandem.datasets, id, ds)
		tandem_dataset_del(id);
	xa_destroy(&tandem.datasets);
	rcu_barrier();		/* the files' RCU frees */
	kmem_cache_destroy(tandem_file_cache);
}

u64 tandem_dataset_pages_cached(struct tandem_dataset *ds)
{
	struct tandem_file *f;
	struct rb_node *n;
	u64 pages = 0;

	lockdep_assert_held(&tandem.lock);
	for (n = rb_first(&ds->files); n; n = rb_next(n)) {
		f = rb_entry(n, struct tandem_file, node);
		pages += READ_ONCE(f->inode->i_mapping->nrpages);
	}
	return pages;
}

u64 tandem_dataset_bytes(struct tandem_dataset *ds)
{
	struct tandem_file *f;
	struct rb_node *n;
	u64 bytes = 0;

	lockdep_assert_held(&tandem.lock);
	for (n = rb_first(&ds->files); n; n = rb_next(n)) {
		f = rb_entry(n, struct tandem_file, node);
		bytes += i_size_read(f->inode);
	}
	return bytes;
}

/*
 * Resolve an absolute path to a regular file. Returns the file, or NULL with
 * *err = -EINVAL (not absolute or not a regular file), -ENOENT, -ENOMEM, ...
 */
struct tandem_file *tandem_file_alloc(const char *pathname, int *err)
{
	struct tandem_file *f;
	struct inode *inode;

	if (pathname[0] != '/') {
		*err = -EINVAL;
		return NULL;
	}
	f = kmem_cache_zalloc(tandem_file_cache, GFP_KERNEL);
	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = kern_path(pathname, LOOKUP_FOLLOW, &f->path);
	if (*err)
		goto out_free;
	inode = d_backing_inode(f->path.dentry);
	if (!inode || !S_ISREG(inode->i_mode)) {
		*err = -EINVAL;
		goto out_put;
	}
	f->inode = inode;
	f->dev = inode->i_sb->s_dev;
	f->ino = inode->i_ino;
	RB_CLEAR_NODE(&f->node);
	INIT_HLIST_NODE(&f->hash);
	INIT_LIST_HEAD(&f->work);
	refcount_set(&f->ref, 1);
	f->pend_start = 1;	/* empty range */
	atomic64_inc(&tandem_live_objects);
	return f;

out_put:
	path_put(&f->path);
out_free:
	kmem_cache_free(tandem_file_cache, f);
	return NULL;
}


static int tandem_file_cmp(dev_t dev, u64 ino, const struct tandem_file *f)
{
	if (dev != f->dev)
		return dev < f->dev ? -1 : 1;
	if (ino != f->ino)
		return ino < f->ino ? -1 : 1;
	return 0;
}

/* 0, -EEXIST (already in the dataset) or -ENOSPC (max_files). */
int tandem_file_insert(struct tandem_dataset *ds, struct tandem_file *f)
{
	struct rb_node **p = &ds->files.rb_node, *parent = NULL;
	int c;

	lockdep_assert_held(&tandem.lock);
	while (*p) {
		parent = *p;
		c = tandem_file_cmp(f->dev, f->ino, rb_entry(parent, struct tandem_file, node));
		if (!c)
			return -EEXIST;
		p = c < 0 ? &parent->rb_left : &parent->rb_right;
	}
	if (ds->nr_files >= tandem_max_files)
		return -ENOSPC;
	rb_link_node(&f->node, parent, p);
	rb_insert_color(&f->node, &ds->files);
	f->ds = ds;
	kobject_get(&ds->kobj);
	ds->nr_files++;
	tandem.nr_files++;
	tandem_steer_file_add(f);
	return 0;
}

/* First file of ds ordered after (dev, ino); (0, 0) gives the first file. */
struct tandem_file *tandem_file_next(struct tandem_dataset *ds, dev_t dev, u64 ino)
{
	struct rb_node *n = ds->files.rb_node;
	struct tandem_file *f, *best = NULL;

	lockdep_assert_held(&tandem.lock);
	while (n) {
		f = rb_entry(n, struct tandem_file, node);
		if (tandem_file_cmp(dev, ino, f) < 0) {
			best = f;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return best;
}

/* Undo tandem_file_insert() (a batch that could not be added whole); the caller puts f. */
void tandem_file_remove(struct tandem_dataset *ds, struct tandem_file *f)
{
	lockdep_assert_held(&tandem.lock);
	tandem_steer_file_del(f);
	rb_erase(&f->node, &ds->files);
	RB_CLEAR_NODE(&f->node);
	ds->nr_files--;
	tandem.nr_files--;
}
