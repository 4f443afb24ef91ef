// SPDX-License-Identifier: GPL-2.0
/*
 * Tandem module entry: parameters, load-time validation, init and teardown.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "tandem.h"

struct tandem_state tandem;
atomic64_t tandem_live_objects = ATOMIC64_INIT(0);

static int cxl_node = TANDEM_NODE_AUTO;
module_param(cxl_node, int, 0444);
MODULE_PARM_DESC(cxl_node,
		 "NUMA node id of the CXL memory; -1 = auto-detect (the CPU-less node with the most dax/kmem memory, i.e. CXL in a lower tier, else with the most memory), -2 = steering disabled (node id, default: -1)");

static bool steer = true;
module_param(steer, bool, 0444);
MODULE_PARM_DESC(steer,
		 "Steer registered dataset page cache to the CXL node (bool, default: Y)");

static unsigned int prefetch_kbps;
module_param(prefetch_kbps, uint, 0444);
MODULE_PARM_DESC(prefetch_kbps,
		 "Bandwidth cap of prefetching, 0 = unlimited (KiB/s, default: 0)");

static unsigned int steer_kbps;
module_param(steer_kbps, uint, 0444);
MODULE_PARM_DESC(steer_kbps,
		 "Rate cap of steering migrations, 0 = unlimited (KiB/s, default: 0)");

unsigned int tandem_max_datasets = 64;
module_param_named(max_datasets, tandem_max_datasets, uint, 0444);
MODULE_PARM_DESC(max_datasets,
		 "Maximum number of registered datasets (count, 1..4096, default: 64)");

/*
 * A guard, not a reservation: files are allocated as they are registered
 * (Documentation/kernel-module.md, "Memory per file"). The default is above
 * ImageNet-21k's 14.2 million files.
 */
unsigned int tandem_max_files = 1U << 25;
module_param_named(max_files, tandem_max_files, uint, 0444);
MODULE_PARM_DESC(max_files,
		 "Maximum number of files in one dataset (count, 1..1073741824, default: 33554432)");

#define TANDEM_MAX_DATASETS_LIMIT	4096
#define TANDEM_MAX_FILES_LIMIT		(1U << 30)

static int __init tandem_params_check(void)
{
	if (!tandem_max_datasets || tandem_max_datasets > TANDEM_MAX_DATASETS_LIMIT) {
		pr_err("max_datasets=%u is out of range (1..%u)\n",
		       tandem_max_datasets, TANDEM_MAX_DATASETS_LIMIT);
		return -EINVAL;
	}
	if (!tandem_max_files || tandem_max_files > TANDEM_MAX_FILES_LIMIT) {
		pr_err("max_files=%u is out of range (1..%u)\n",
		       tandem_max_files, TANDEM_MAX_FILES_LIMIT);
		return -EINVAL;
	}
	if (prefetch_kbps > TANDEM_PREFETCH_KBPS_MAX) {
		pr_err("prefetch_kbps=%u is out of range (0..%u)\n",
		       prefetch_kbps, TANDEM_PREFETCH_KBPS_MAX);
		return -EINVAL;
	}
	if (steer_kbps > TANDEM_STEER_KBPS_MAX) {
		pr_err("steer_kbps=%u is out of range (0..%u)\n",
		       steer_kbps, TANDEM_STEER_KBPS_MAX);
		return -EINVAL;
	}
	return 0;
}

static int __init tandem_init(void)
{
	const char *why = NULL;
	int err;

	err = tandem_params_check();
	if (err)
		return err;
	mutex_init(&tandem.lock);
	xa_init_flags(&tandem.datasets, XA_FLAGS_ALLOC1);
	tandem.steer = steer;
	tandem.prefetch_kbps = prefetch_kbps;
	tandem.steer_kbps = steer_kbps;
	err = tandem_node_set(cxl_node, &why);
	if (err) {
		pr_err("cxl_node=%d: %s\n", cxl_node, why);
		return err;
	}
	err = tandem_headroom_init();
	if (err)
		return err;
	err = tandem_registry_init();
	if (err)
		goto out_headroom;
	err = tandem_steer_init();
	if (err)
		goto out_registry;
	err = tandem_sysfs_init();
	if (err)
		goto out_steer;
	err = tandem_netlink_init();
	if (err)
		goto out_sysfs;
	pr_info("loaded, version %s, cxl_node %d (%s), steer %d\n",
		TANDEM_VERSION, tandem.cxl_node, tandem.cxl_reason, tandem.steer);
	return 0;

out_sysfs:
	tandem_sysfs_exit();
out_steer:
	tandem_steer_stop();
	tandem_steer_exit();
out_registry:
	tandem_registry_exit();
out_headroom:
	tandem_headroom_exit();
	return err;
}

static void __exit tandem_exit(void)
{
	s64 live;

	/*
	 * Refuse state changes, let prefetches finish cancelling (they send
	 * netlink events), close netlink, stop steering, drop the datasets,
	 * then their sysfs parent.
	 */
	mutex_lock(&tandem.lock);
	WRITE_ONCE(tandem.exiting, true);
	mutex_unlock(&tandem.lock);
	tandem_prefetch_stop_all();
	tandem_netlink_exit();
	tandem_steer_stop();
	tandem_dataset_del_all();
	tandem_registry_exit();
	tandem_steer_exit();
	tandem_sysfs_exit();
	tandem_headroom_exit();
	live = atomic64_read(&tandem_live_objects);
	if (live)
		pr_err("%lld objects leaked at unload\n", live);
	pr_info("unloaded\n");
}

module_init(tandem_init);
module_exit(tandem_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Tandem: dataset page-cache steering to CXL memory for co-located training jobs");
MODULE_VERSION(TANDEM_VERSION);
