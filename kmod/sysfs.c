// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/tandem: knobs and counters, one value per file, and
 * datasets/<id>/ per registered dataset. ABI: Documentation/ABI/testing/sysfs-kernel-tandem.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "tandem.h"

/* Knob writes change system-wide placement: CAP_SYS_ADMIN, like netlink. */
static int tandem_sysfs_may_write(void)
{
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", TANDEM_VERSION);
}

static ssize_t cxl_node_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(tandem.cxl_node));
}

static ssize_t cxl_node_store(struct kobject *kobj, struct kobj_attribute *attr,
			      const char *buf, size_t count)
{
	const char *why = NULL;
	int err, nid;

	err = tandem_sysfs_may_write();
	if (err)
		return err;
	err = kstrtoint(buf, 0, &nid);
	if (err)
		return -EINVAL;
	if (nid < TANDEM_NODE_NONE)
		return -EINVAL;
	mutex_lock(&tandem.lock);
	err = tandem_node_set(nid, &why);
	mutex_unlock(&tandem.lock);
	return err ? err : count;
}

static ssize_t cxl_node_reason_show(struct kobject *kobj, struct kobj_attribute *attr,
				    char *buf)
{
	ssize_t len;

	mutex_lock(&tandem.lock);
	len = sysfs_emit(buf, "%s\n", tandem.cxl_reason);
	mutex_unlock(&tandem.lock);
	return len;
}

static ssize_t steer_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(tandem.steer));
}

static ssize_t steer_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	bool on;
	int err;

	err = tandem_sysfs_may_write();
	if (err)
		return err;
	if (kstrtobool(buf, &on))
		return -EINVAL;
	mutex_lock(&tandem.lock);
	WRITE_ONCE(tandem.steer, on);
	mutex_unlock(&tandem.lock);
	return count;
}

/* A KiB/s rate knob: 0 (unlimited) to max. */
static ssize_t tandem_kbps_store(u32 *knob, u32 max, const char *buf, size_t count)
{
	unsigned int kbps;
	int err;

	err = tandem_sysfs_may_write();
	if (err)
		return err;
	if (kstrtouint(buf, 0, &kbps) || kbps > max)
		return -EINVAL;
	mutex_lock(&tandem.lock);
	WRITE_ONCE(*knob, kbps);
	mutex_unlock(&tandem.lock);
	return count;
}

static ssize_t prefetch_kbps_show(struct kobject *kobj, struct kobj_attribute *attr,
				  char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(tandem.prefetch_kbps));
}

static ssize_t prefetch_kbps_store(struct kobject *kobj, struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	return tandem_kbps_store(&tandem.prefetch_kbps, TANDEM_PREFETCH_KBPS_MAX, buf, count);
}

static ssize_t steer_kbps_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(tandem.steer_kbps));
}

static ssize_t steer_kbps_store(struct kobject *kobj, struct kobj_attribute *attr,
				const char *buf, size_t count)
{
	return tandem_kbps_store(&tandem.steer_kbps, TANDEM_STEER_KBPS_MAX, buf, count);
}

#define TANDEM_COUNTER_SHOW(_name, _fmt, _expr)					\
static ssize_t _name##_show(struct kobject *kobj, struct kobj_attribute *attr,	\
			    char *buf)						\
{										\
	return sysfs_emit(buf, _fmt "\n", _expr);				\
}										\
static struct kobj_attribute _name##_attr = __ATTR_RO(_name)

TANDEM_COUNTER_SHOW(nr_datasets, "%u", READ_ONCE(tandem.nr_datasets));
TANDEM_COUNTER_SHOW(nr_files, "%u", READ_ONCE(tandem.nr_files));
TANDEM_COUNTER_SHOW(max_datasets, "%u", tandem_max_datasets);
TANDEM_COUNTER_SHOW(max_files, "%u", tandem_max_files);
TANDEM_COUNTER_SHOW(live_objects, "%lld", (long long)atomic64_read(&tandem_live_objects));

static struct kobj_attribute version_attr = __ATTR_RO(version);
static struct kobj_attribute cxl_node_attr = __ATTR_RW_MODE(cxl_node, 0644);
static struct kobj_attribute cxl_node_reason_attr = __ATTR_RO(cxl_node_reason);
static struct kobj_attribute steer_attr = __ATTR_RW_MODE(steer, 0644);
static struct kobj_attribute prefetch_kbps_attr = __ATTR_RW_MODE(prefetch_kbps, 0644);
static struct kobj_attribute steer_kbps_attr = __ATTR_RW_MODE(steer_kbps, 0644);

static struct attribute *tandem_root_attrs[] = {
	&version_attr.attr,
	&cxl_node_attr.attr,
	&cxl_node_reason_attr.attr,
	&steer_attr.attr,
	&prefetch_kbps_attr.attr,
	&steer_kbps_attr.attr,
	&nr_datasets_attr.attr,
	&nr_files_attr.attr,
	&max_datasets_attr.attr,
	&max_files_attr.attr,
	&live_objects_attr.attr,
	NULL,
};

static const struct attribute_group tandem_root_group = {
	.attrs = tandem_root_attrs,
};

/*
 * datasets/<id>/: a sysfs object apart from the runtime dataset, which it
 * holds a reference on; its release frees the sysfs object alone. A
 * deleted dataset's files read as empty until the directory is gone.
 */
struct tandem_dataset_sysfs {
	struct kobject kobj;
	struct tandem_dataset *ds;
};

static struct tandem_dataset *to_dataset(struct kobject *kobj)
{
	return container_of(kobj, struct tandem_dataset_sysfs, kobj)->ds;
}

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_dataset(kobj)->name);
}

static ssize_t files_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct tandem_dataset *ds = to_dataset(kobj);
	u32 n;

	mutex_lock(&tandem.lock);
	n = ds->nr_files;
	mutex_unlock(&tandem.lock);
	return sysfs_emit(buf, "%u\n", n);
}

static ssize_t pages_cached_show(struct kobject *kobj, struct kobj_attribute *attr,
				 char *buf)
{
	struct tandem_usage u = {};

	tandem_dataset_usage(to_dataset(kobj), &u);
	return sysfs_emit(buf, "%llu\n", u.pages_cached);
}

static ssize_t bytes_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct tandem_usage u = {};

	tandem_dataset_usage(to_dataset(kobj), &u);
	return sysfs_emit(buf, "%llu\n", u.bytes);
}

/* cached pages per node, "N0 N1 ..." for nodes 0..nr_node_ids-1 */
static ssize_t node_pages_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct tandem_usage u = {};
	ssize_t len = 0;
	int nid;

	u.node_pages = kcalloc(nr_node_ids, sizeof(*u.node_pages), GFP_KERNEL);
	if (!u.node_pages)
		return -ENOMEM;
	tandem_dataset_usage(to_dataset(kobj), &u);
	for (nid = 0; nid < nr_node_ids; nid++)
		len += sysfs_emit_at(buf, len, "%s%llu", nid ? " " : "", u.node_pages[nid]);
	len += sysfs_emit_at(buf, len, "\n");
	kfree(u.node_pages);
	return len;
}

static ssize_t target_node_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(to_dataset(kobj)->node));
}

static ssize_t steer_pending_show(struct kobject *kobj, struct kobj_attribute *attr,
				  char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read_acquire(&to_dataset(kobj)->steer_queued));
}

static const char *const tandem_prefetch_states[] = {
	[TANDEM_PREFETCH_IDLE] = "idle",
	[TANDEM_PREFETCH_RUNNING] = "running",
	[TANDEM_PREFETCH_DONE] = "done",
	[TANDEM_PREFETCH_CANCELLED] = "cancelled",
	[TANDEM_PREFETCH_FAILED] = "failed",
};

static ssize_t prefetch_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct tandem_dataset *ds = to_dataset(kobj);
	struct tandem_prefetch_info info = {};

	mutex_lock(&tandem.lock);
	if (!ds->dead)
		tandem_prefetch_info(ds, &info);
	mutex_unlock(&tandem.lock);
	return sysfs_emit(buf, "%s %llu %llu\n", tandem_prefetch_states[info.state],
			  info.pages_done, info.pages_total);
}

static struct kobj_attribute name_attr = __ATTR_RO(name);
static struct kobj_attribute files_attr = __ATTR_RO(files);
static struct kobj_attribute pages_cached_attr = __ATTR_RO(pages_cached);
static struct kobj_attribute bytes_attr = __ATTR_RO(bytes);
static struct kobj_attribute node_pages_attr = __ATTR_RO(node_pages);
static struct kobj_attribute target_node_attr = __ATTR_RO(target_node);
static struct kobj_attribute steer_pending_attr = __ATTR_RO(steer_pending);
static struct kobj_attribute prefetch_attr = __ATTR_RO(prefetch);

static struct attribute *tandem_dataset_attrs[] = {
	&name_attr.attr,
	&files_attr.attr,
	&pages_cached_attr.attr,
	&bytes_attr.attr,
	&node_pages_attr.attr,
	&target_node_attr.attr,
	&steer_pending_attr.attr,
	&prefetch_attr.attr,
	NULL,
};

static const struct attribute_group tandem_dataset_group = {
	.attrs = tandem_dataset_attrs,
};

/* datasets/<id>/counters/<name>: one enum tandem_counter each */
const char *const tandem_counter_names[__TANDEM_CNT_MAX] = {
	[TANDEM_CNT_STEERED] = "steered",
	[TANDEM_CNT_PREFETCHED] = "prefetched",
	[TANDEM_CNT_PREFETCH_CACHED] = "prefetch_cached",
	[TANDEM_CNT_MIGRATE_FAILED] = "migrate_failed",
	[TANDEM_CNT_SKIP_LOCKED] = "skip_locked",
	[TANDEM_CNT_SKIP_TRUNCATED] = "skip_truncated",
	[TANDEM_CNT_SKIP_NOT_UPTODATE] = "skip_not_uptodate",
	[TANDEM_CNT_SKIP_DIRTY] = "skip_dirty",
	[TANDEM_CNT_SKIP_WRITEBACK] = "skip_writeback",
	[TANDEM_CNT_SKIP_MAPPED] = "skip_mapped",
	[TANDEM_CNT_SKIP_PINNED] = "skip_pinned",
	[TANDEM_CNT_SKIP_PRIVATE] = "skip_private",
	[TANDEM_CNT_SKIP_LARGE] = "skip_large",
	[TANDEM_CNT_SKIP_TARGET_FULL] = "skip_target_full",
	[TANDEM_CNT_STEERED_LARGE] = "steered_large",
};

struct tandem_cnt_attr {
	struct kobj_attribute attr;
	int idx;
};

/* a file of the "counters" group: kobj is the dataset's directory */
static ssize_t tandem_cnt_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct tandem_cnt_attr *ca = container_of(attr, struct tandem_cnt_attr, attr);

	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&to_dataset(kobj)->cnt[ca->idx]));
}

static struct tandem_cnt_attr tandem_cnt_attrs[__TANDEM_CNT_MAX];
static struct attribute *tandem_cnt_attr_ptrs[__TANDEM_CNT_MAX + 1];
static const struct attribute_group tandem_cnt_group = {
	.name = "counters",
	.attrs = tandem_cnt_attr_ptrs,
};

static void tandem_cnt_attrs_init(void)
{
	int i;

	for (i = 0; i < __TANDEM_CNT_MAX; i++) {
		sysfs_attr_init(&tandem_cnt_attrs[i].attr.attr);
		tandem_cnt_attrs[i].attr.attr.name = tandem_counter_names[i];
		tandem_cnt_attrs[i].attr.attr.mode = 0444;
		tandem_cnt_attrs[i].attr.show = tandem_cnt_show;
		tandem_cnt_attrs[i].idx = i;
		tandem_cnt_attr_ptrs[i] = &tandem_cnt_attrs[i].attr.attr;
	}
}

static const struct attribute_group *tandem_dataset_groups[] = {
	&tandem_dataset_group,
	&tandem_cnt_group,
	NULL,
};

static void tandem_dataset_sysfs_release(struct kobject *kobj)
{
	struct tandem_dataset_sysfs *dsys = container_of(kobj, struct tandem_dataset_sysfs, kobj);

	tandem_dataset_put(dsys->ds);
	kfree(dsys);
	atomic64_dec(&tandem_live_objects);
}

static struct kobj_type tandem_dataset_ktype = {
	.release = tandem_dataset_sysfs_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = tandem_dataset_groups,
};

/* datasets/<id>/ with its counters/, or an error and no directory. */
int tandem_sysfs_dataset_add(struct tandem_dataset *ds)
{
	struct tandem_dataset_sysfs *dsys;
	int err;

	dsys = kzalloc(sizeof(*dsys), GFP_KERNEL);
	if (!dsys)
		return -ENOMEM;
	atomic64_inc(&tandem_live_objects);
	tandem_dataset_get(ds);
	dsys->ds = ds;
	err = kobject_init_and_add(&dsys->kobj, &tandem_dataset_ktype,
				   tandem.datasets_kobj, "%u", ds->id);
	if (err) {
		kobject_put(&dsys->kobj);
		return err;
	}
	ds->sysfs = dsys;
	return 0;
}

/* Not under tandem.lock: removal waits for readers, which take it. */
void tandem_sysfs_dataset_del(struct tandem_dataset *ds)
{
	kobject_del(&ds->sysfs->kobj);
	kobject_put(&ds->sysfs->kobj);
}

int tandem_sysfs_init(void)
{
	int err;

	tandem_cnt_attrs_init();
	tandem.root_kobj = kobject_create_and_add("tandem", kernel_kobj);
	if (!tandem.root_kobj)
		return -ENOMEM;
	err = sysfs_create_group(tandem.root_kobj, &tandem_root_group);
	if (err)
		goto out_root;
	tandem.datasets_kobj = kobject_create_and_add("datasets", tandem.root_kobj);
	if (!tandem.datasets_kobj) {
		err = -ENOMEM;
		goto out_group;
	}
	return 0;

out_group:
	sysfs_remove_group(tandem.root_kobj, &tandem_root_group);
out_root:
	kobject_put(tandem.root_kobj);
	return err;
}

void tandem_sysfs_exit(void)
{
	kobject_put(tandem.datasets_kobj);
	sysfs_remove_group(tandem.root_kobj, &tandem_root_group);
	kobject_put(tandem.root_kobj);
}
