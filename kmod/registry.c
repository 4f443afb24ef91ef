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
#include <linux/pagevec.h>
#include <linux/slab.h>
#include <linux/ctype.h>
#include <linux/string.h>

#include "tandem.h"

static struct kmem_cache *tandem_file_cache, *tandem_dataset_cache;
static u32 tandem_next_id;

int tandem_registry_init(void)
{
	tandem_file_cache = KMEM_CACHE(tandem_file, 0);
	if (!tandem_file_cache)
		return -ENOMEM;
	tandem_dataset_cache = KMEM_CACHE(tandem_dataset, 0);
	if (!tandem_dataset_cache) {
		kmem_cache_destroy(tandem_file_cache);
		return -ENOMEM;
	}
	return 0;
}

void tandem_dataset_get(struct tandem_dataset *ds)
{
	refcount_inc(&ds->ref);
}

static void tandem_dataset_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(tandem_dataset_cache, container_of(rcu, struct tandem_dataset, rcu));
}

void tandem_dataset_put(struct tandem_dataset *ds)
{
	if (!refcount_dec_and_test(&ds->ref))
		return;
	WARN_ON_ONCE(ds->prefetch || !RB_EMPTY_ROOT(&ds->files));
	atomic64_dec(&tandem_live_objects);
	/* a probe that found one of its files under RCU may still read it */
	call_rcu(&ds->rcu, tandem_dataset_free_rcu);
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
	/* queued before the file's own free: both wait for the same readers */
	if (f->ds)
		tandem_dataset_put(f->ds);
	atomic64_dec(&tandem_live_objects);
	/* the page-cache probes may still be looking at it under RCU */
	call_rcu(&f->rcu, tandem_file_free_rcu);
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

struct tandem_dataset *tandem_dataset_alloc(const char *name)
{
	struct tandem_dataset *ds = kmem_cache_zalloc(tandem_dataset_cache, GFP_KERNEL);

	if (!ds)
		return NULL;
	atomic64_inc(&tandem_live_objects);
	refcount_set(&ds->ref, 1);	/* the registry's */
	strscpy(ds->name, name, sizeof(ds->name));
	ds->files = RB_ROOT;
	ds->node = -1;
	ds->full_until = jiffies;
	return ds;
}

/* After tandem_dataset_del_all(): the registry is empty. */
void tandem_registry_exit(void)
{
	xa_destroy(&tandem.datasets);
	rcu_barrier();		/* the files' and datasets' RCU frees */
	kmem_cache_destroy(tandem_dataset_cache);
	kmem_cache_destroy(tandem_file_cache);
}

/*
 * Give ds an id in the registry, tandem.lock held: 0, -ENOSPC (max_datasets),
 * -EEXIST (name taken) or xa_alloc_cyclic()'s error. The caller counts it in
 * tandem.nr_datasets once the dataset is complete.
 */
int tandem_dataset_id_alloc(struct tandem_dataset *ds)
{
	int err;

	lockdep_assert_held(&tandem.lock);
	if (tandem.nr_datasets >= tandem_max_datasets)
		return -ENOSPC;
	if (tandem_dataset_name_taken(ds->name))
		return -EEXIST;
	/* cyclic ids: a deleted dataset's id is not handed out again at once */
	err = xa_alloc_cyclic(&tandem.datasets, &ds->id, ds, XA_LIMIT(1, INT_MAX),
			      &tandem_next_id, GFP_KERNEL);
	return err < 0 ? err : 0;
}

#define TANDEM_WALK_BATCH	32

/*
 * Call fn for each file of ds without holding tandem.lock while fn runs:
 * the lock is taken for each batch of files only, to take references on
 * them in (dev, ino) order. Files added or removed meanwhile may or may
 * not be seen; a deleted dataset ends the walk. Process context. Returns
 * the number of files walked.
 */
int tandem_dataset_walk(struct tandem_dataset *ds,
			void (*fn)(struct tandem_file *f, void *arg), void *arg)
{
	struct tandem_file *batch[TANDEM_WALK_BATCH], *f;
	int i, n, walked = 0;
	dev_t dev = 0;
	u64 ino = 0;

	do {
		n = 0;
		mutex_lock(&tandem.lock);
		for (f = ds->dead ? NULL : tandem_file_next(ds, dev, ino);
		     f && n < TANDEM_WALK_BATCH; f = tandem_file_next(ds, f->dev, f->ino)) {
			tandem_file_get(f);
			batch[n++] = f;
		}
		mutex_unlock(&tandem.lock);
		for (i = 0; i < n; i++) {
			fn(batch[i], arg);
			dev = batch[i]->dev;
			ino = batch[i]->ino;
			tandem_file_put(batch[i]);
		}
		walked += n;
		cond_resched();
	} while (n == TANDEM_WALK_BATCH);
	return walked;
}

/* Add f's cached pages per node to u->node_pages[0..nr_node_ids). */
static void tandem_file_node_pages(struct tandem_file *f, struct tandem_usage *u)
{
	struct folio_batch fbatch;
	pgoff_t index = 0;
	unsigned int i;

	folio_batch_init(&fbatch);
	while (filemap_get_folios(f->inode->i_mapping, &index, ULONG_MAX - 1, &fbatch)) {
		for (i = 0; i < folio_batch_count(&fbatch); i++) {
			struct folio *folio = fbatch.folios[i];

			u->node_pages[folio_nid(folio)] += folio_nr_pages(folio);
		}
		folio_batch_release(&fbatch);
		cond_resched();
	}
}

static void tandem_usage_add(struct tandem_file *f, void *arg)
{
	struct tandem_usage *u = arg;

	u->bytes += i_size_read(f->inode);
	u->pages_cached += READ_ONCE(f->inode->i_mapping->nrpages);
	if (u->node_pages)
		tandem_file_node_pages(f, u);
}

/* Sizes and cached pages of ds's files; per node when u->node_pages is set. */
void tandem_dataset_usage(struct tandem_dataset *ds, struct tandem_usage *u)
{
	u->bytes = 0;
	u->pages_cached = 0;
	if (u->node_pages)
		memset(u->node_pages, 0, nr_node_ids * sizeof(*u->node_pages));
	tandem_dataset_walk(ds, tandem_usage_add, u);
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

/*
 * Where f goes in ds's rbtree, tandem.lock held: the link to set (and its
 * parent), or NULL when a file of the same (dev, ino) is there already.
 */
struct rb_node **tandem_file_slot(struct tandem_dataset *ds, struct tandem_file *f,
				  struct rb_node **parent)
{
	struct rb_node **p = &ds->files.rb_node;
	int c;

	lockdep_assert_held(&tandem.lock);
	*parent = NULL;
	while (*p) {
		*parent = *p;
		c = tandem_file_cmp(f->dev, f->ino, rb_entry(*parent, struct tandem_file, node));
		if (!c)
			return NULL;
		p = c < 0 ? &(*parent)->rb_left : &(*parent)->rb_right;
	}
	return p;
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
