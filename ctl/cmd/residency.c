// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl residency [DATASET]
 */
#include "cli/cmd.h"
#include "lib/out.h"
#include "module/module.h"

static int cmd_residency(int argc, char **argv)
{
	struct dataset_state st;
	struct tnl *nl;
	uint32_t id;
	int err;

	err = ctl_args(&argc, argv, 0, 1, "residency", NULL);
	if (err)
		return err;
	err = tnl_open(&nl, false);
	if (err)
		return err;
	if (argc == 1) {
		out_obj_open(NULL);
		err = dataset_state_print_all(nl);
		out_obj_close();
		goto close_nl;
	}
	err = dataset_resolve(nl, argv[1], &id);
	err = err ?: dataset_state_get(nl, id, &st);
	if (!err)
		dataset_state_print(NULL, &st);
close_nl:
	tnl_close(nl);
	return err;
}

TANDEM_CMD(residency, "residency", NULL, cmd_residency, "[DATASET]",
	   "per dataset: cached pages per node, steered/prefetched pages, skips by reason");
