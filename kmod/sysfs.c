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
	WRITE_ONCE(tandem.steer, on);
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
	unsigned int kbps;
	int err;

	err = tandem_sysfs_may_write();
	if (err)
		return err;
	if (kstrtouint(buf, 0, &kbps) || kbps > TANDEM_PREFETCH_KBPS_MAX)
		return -EINVAL;
	WRITE_ONCE(tandem.prefetch_kbps, kbps);
	return count;
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

static struct attribute *tandem_root_attrs[] = {
	&version_attr.attr,
	&cxl_node_attr.attr,
	&cxl_node_reason_attr.attr,
	&steer_attr.attr,
	&prefetch_kbps_attr.attr,
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

/* datasets/<id>/ */

static struct tandem_dataset *to_dataset(struct kobject *kobj)
{
	return container_of(kobj, struct tandem_dataset, kobj);
}

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_dataset(kobj)->name);
}

/* Counters read under the lock; a dataset being deleted reads as empty. */
static ssize_t tandem_dataset_emit(struct kobject *kobj, char *buf,
				   u64 (*get)(struct tandem_dataset *ds))
{
	struct tandem_dataset *ds = to_dataset(kobj);
	u64 v = 0;

	mutex_lock(&tandem.lock);
	if (!ds->dead)
		v = get(ds);
	mutex_unlock(&tandem.lock);
	return sysfs_emit(buf, "%llu\n", v);
}

static u64 tandem_dataset_nr_files(struct tandem_dataset *ds)
{
	return ds->nr_files;
}

static ssize_t files_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return tandem_dataset_emit(kobj, buf, tandem_dataset_nr_files);
}

static ssize_t pages_cached_show(struct kobject *kobj, struct kobj_attribute *attr,
				 char *buf)
{
	return tandem_dataset_emit(kobj, buf, tandem_dataset_pages_cached);
}

static ssize_t bytes_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return tandem_dataset_emit(kobj, buf, tandem_dataset_bytes);
}

static struct kobj_attribute name_attr = __ATTR_RO(name);
static struct kobj_attribute files_attr = __ATTR_RO(files);
static struct kobj_attribute pages_cached_attr = __ATTR_RO(pages_cached);
static struct kobj_attribute bytes_attr = __ATTR_RO(bytes);

static struct attribute *tandem_dataset_attrs[] = {
	&name_attr.attr,
	&files_attr.attr,
	&pages_cached_attr.attr,
	&bytes_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(tandem_dataset);

static void tandem_dataset_release(struct kobject *kobj)
{
	kfree(to_dataset(kobj));
	atomic64_dec(&tandem_live_objects);
}

static struct kobj_type tandem_dataset_ktype = {
	.release = tandem_dataset_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = tandem_dataset_groups,
};

/* On error the dataset has been freed. */
int tandem_sysfs_dataset_add(struct tandem_dataset *ds)
{
	int err;

	err = kobject_init_and_add(&ds->kobj, &tandem_dataset_ktype,
				   tandem.datasets_kobj, "%u", ds->id);
	if (err)
		kobject_put(&ds->kobj);
	return err;
}

void tandem_sysfs_dataset_del(struct tandem_dataset *ds)
{
	kobject_del(&ds->kobj);
	kobject_put(&ds->kobj);
}

int tandem_sysfs_init(void)
{
	int err;

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
