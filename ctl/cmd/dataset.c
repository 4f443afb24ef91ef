// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl dataset add|list|show|del: the module's dataset registry
 * (module/module.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/util.h"
#include "module/module.h"
#include "tracker/tracker.h"

/*
 * --dry-run: the files the walk takes (lib/files.h), without tandem.ko;
 * what 'dataset add' would register, for checking a DIR before a run.
 */
static void print_walk(const char *name, const struct file_list *fl)
{
	char size[32];

	out_obj_open(NULL);
	out_str("name", "dataset %s:", name);
	out_u64("files", " %llu files", fl->n);
	out_u64("bytes", NULL, fl->bytes);
	out_text(", %s", fmt_bytes(size, sizeof(size), fl->bytes));
	file_skips_print(&fl->skipped);
	out_text(" (dry run: nothing registered)\n");
	out_arr_open("paths");
	for (size_t i = 0; i < fl->n; i++)
		out_str(NULL, "  %s\n", fl->paths[i]);
	out_arr_close();
	out_obj_close();
}

static int add_args(int *argc, char **argv, bool *dry_run)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ 0 }
	};
	int opt;

	optind = 0;
	while ((opt = ctl_getopt(*argc, argv, "", opts, "dataset", "add")) != -1) {
		if (opt != 'n')
			return opt;	/* CTL_EUSAGE, printed */
		*dry_run = true;
	}
	if (*argc - optind < 2)
		return ctl_usage_err("dataset", "add", "needs NAME and at least one PATH");
	/* the arguments as argv[1..*argc) */
	memmove(argv + 1, argv + optind, (*argc - optind) * sizeof(*argv));
	*argc = *argc - optind + 1;
	return 0;
}

static int cmd_dataset_add(int argc, char **argv)
{
	struct file_list fl = { 0 };
	struct tracker_add_result tres;
	struct tracker_fit fit;
	struct tracker trk;
	uint32_t id = 0, added = 0, dups = 0;
	bool dry_run = false;
	struct tnl *nl;
	int err;

	err = add_args(&argc, argv, &dry_run);
	if (err)
		return err;
	err = file_list_collect(&fl, argv + 2, argc - 2);
	if (err)
		goto free_fl;
	if (!fl.n) {
		ctl_err("no regular files under the given paths");
		err = -ENOENT;
		goto free_fl;
	}
	if (dry_run) {
		print_walk(argv[1], &fl);
		goto free_fl;
	}
	err = tnl_open(&nl, false);
	if (err)
		goto free_fl;
	err = dataset_create(nl, argv[1], &id);
	if (err)
		goto close_nl;
	err = dataset_add_files(nl, id, &fl, &added, &dups);
	if (err) {
		/* a half-registered dataset is worse than none */
		dataset_del(nl, id);
		goto close_nl;
	}
	/* a loaded tracker gets the same files under the same name (grown if too small) */
	err = tracker_register(&trk, argv[1], fl.paths, fl.n, TRACKER_REG_IF_LOADED, &tres, &fit);
	if (fit.tracked)
		tracker_close(&trk);
	if (err)
		ctl_err("dataset %s: registered with tandem.ko but not with the tracker", argv[1]);
	out_obj_open(NULL);
	out_u64("id", "dataset %llu", id);
	out_str("name", " (%s):", argv[1]);
	out_u64("files", " %llu files registered", added);
	out_u64("duplicates", ", %llu duplicates", dups);
	file_skips_print(&fl.skipped);
	out_text("\n");
	out_obj_close();
close_nl:
	tnl_close(nl);
free_fl:
	file_list_free(&fl);
	return err;
}

static void print_ds(const struct dataset_info *ds)
{
	char size[32], cached[32];

	out_u64("id", "%-5llu ", ds->id);
	out_str("name", "%-24s ", ds->name);
	out_u64("files", "%8llu ", ds->nfiles);
	out_u64("bytes", NULL, ds->bytes);
	out_text("%12s ", fmt_bytes(size, sizeof(size), ds->bytes));
	out_u64("pages_cached", NULL, ds->pages_cached);
	out_text("%12s\n", fmt_bytes(cached, sizeof(cached),
				     ds->pages_cached * (uint64_t)sysconf(_SC_PAGESIZE)));
}

static void print_ds_header(void)
{
	out_text("%-5s %-24s %8s %12s %12s\n", "ID", "NAME", "FILES", "SIZE", "CACHED");
}

static int print_listed(void *arg, const struct dataset_info *ds)
{
	(void)arg;
	out_obj_open(NULL);
	print_ds(ds);
	out_obj_close();
	return 0;
}

static int cmd_dataset_list(int argc, char **argv)
{
	struct tnl *nl;
	int err;

	err = ctl_args(&argc, argv, 0, 0, "dataset", "list");
	if (err)
		return err;
	err = tnl_open(&nl, false);
	if (err)
		return err;
	print_ds_header();
	out_arr_open(NULL);
	err = dataset_each(nl, print_listed, NULL);
	out_arr_close();
	tnl_close(nl);
	return err;
}

static int print_file(void *arg, const struct dataset_file *f)
{
	char size[32];

	(void)arg;
	out_obj_open(NULL);
	out_str("path", "  %s", f->path);
	if (f->has_dev)
		out_u64("dev", NULL, f->dev);
	if (f->has_ino)
		out_u64("ino", NULL, f->ino);
	out_u64("bytes", NULL, f->bytes);
	out_text("  %s", fmt_bytes(size, sizeof(size), f->bytes));
	if (f->has_pages)
		out_u64("pages_cached", ", %llu pages cached", f->pages_cached);
	out_text("\n");
	out_obj_close();
	return 0;
}

static int cmd_dataset_show(int argc, char **argv)
{
	struct dataset_info ds;
	struct tnl *nl;
	uint32_t id;
	int err;

	err = ctl_args(&argc, argv, 1, 1, "dataset", "show");
	err = err ?: dataset_open(&nl, argv[1], &id);
	if (err)
		return err;
	err = dataset_info_get(nl, id, &ds);
	if (err)
		goto close_nl;
	print_ds_header();
	out_obj_open(NULL);
	print_ds(&ds);
	out_text("files:\n");
	out_arr_open("file_list");
	err = dataset_files_each(nl, id, print_file, NULL);
	out_arr_close();
	out_obj_close();
close_nl:
	tnl_close(nl);
	return err;
}

static int cmd_dataset_del(int argc, char **argv)
{
	struct tnl *nl;
	uint32_t id;
	int err;

	err = ctl_args(&argc, argv, 1, 1, "dataset", "del");
	err = err ?: dataset_open(&nl, argv[1], &id);
	if (err)
		return err;
	err = dataset_del(nl, id);
	tnl_close(nl);
	if (err)
		return err;
	out_obj_open(NULL);
	out_u64("id", "dataset %llu unregistered\n", id);
	out_obj_close();
	return 0;
}

TANDEM_CMD(dataset_add, "dataset", "add", cmd_dataset_add, "[--dry-run] NAME PATH...",
	   "register a dataset: files, and directories walked recursively (regular files only); --dry-run lists them");
TANDEM_CMD(dataset_list, "dataset", "list", cmd_dataset_list, "",
	   "list registered datasets with their size and cached bytes");
TANDEM_CMD(dataset_show, "dataset", "show", cmd_dataset_show, "ID|NAME",
	   "one dataset and its files");
TANDEM_CMD(dataset_del, "dataset", "del", cmd_dataset_del, "ID|NAME",
	   "unregister a dataset (its page cache is left alone)");
