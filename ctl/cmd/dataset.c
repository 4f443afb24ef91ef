// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl dataset add|list|show|del: the module's dataset registry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "module/module.h"
#include "lib/files.h"
#include "module/nl.h"
#include "lib/out.h"
#include "lib/util.h"

/* FILE_ADD batches: well under the socket's send buffer */
#define FILE_BATCH_BYTES 65536

struct ds_info {
	uint32_t id, nfiles;
	char name[TANDEM_NAME_MAX];
	uint64_t bytes, pages;
};

static int ds_info_parse(struct nlattr **tb, void *out)
{
	struct ds_info *ds = out;

	if (!tb[TANDEM_A_DATASET_ID] || !tb[TANDEM_A_DATASET_NAME])
		return -EBADMSG;
	memset(ds, 0, sizeof(*ds));
	ds->id = nla_get_u32(tb[TANDEM_A_DATASET_ID]);
	snprintf(ds->name, sizeof(ds->name), "%s", nla_get_string(tb[TANDEM_A_DATASET_NAME]));
	if (tb[TANDEM_A_DATASET_NFILES])
		ds->nfiles = nla_get_u32(tb[TANDEM_A_DATASET_NFILES]);
	if (tb[TANDEM_A_DATASET_BYTES])
		ds->bytes = nla_get_u64(tb[TANDEM_A_DATASET_BYTES]);
	if (tb[TANDEM_A_DATASET_PAGES_CACHED])
		ds->pages = nla_get_u64(tb[TANDEM_A_DATASET_PAGES_CACHED]);
	return 0;
}

static int put_id(struct nl_msg *msg, const void *in)
{
	return nla_put_u32(msg, TANDEM_A_DATASET_ID, *(const uint32_t *)in) ? -EMSGSIZE : 0;
}

static int put_name(struct nl_msg *msg, const void *in)
{
	return nla_put_string(msg, TANDEM_A_DATASET_NAME, in) ? -EMSGSIZE : 0;
}

static int id_parse(struct nlattr **tb, void *out)
{
	if (!tb[TANDEM_A_DATASET_ID])
		return -EBADMSG;
	*(uint32_t *)out = nla_get_u32(tb[TANDEM_A_DATASET_ID]);
	return 0;
}

/* a dump that keeps the id of the dataset called name */
struct find_ctx {
	const char *name;
	uint32_t id;
};

static int find_parse(struct nlattr **tb, void *out)
{
	struct find_ctx *f = out;
	struct ds_info ds;
	int err = ds_info_parse(tb, &ds);

	if (!err && !strcmp(ds.name, f->name))
		f->id = ds.id;
	return err;
}

int dataset_resolve(const char *arg, uint32_t *id)
{
	struct find_ctx f = { .name = arg };
	struct tnl_req req = {
		.cmd = TANDEM_CMD_DATASET_GET, .dump = true, .parse = find_parse, .out = &f,
	};
	int err;

	if (!parse_u32(arg, id) && *id)
		return 0;
	err = tnl_request(&req);
	if (err)
		return err;
	if (!f.id) {
		ctl_err("no dataset '%s'", arg);
		return -ENOENT;
	}
	*id = f.id;
	return 0;
}

struct batch {
	uint32_t id;
	const struct file_list *fl;
	size_t next, end;		/* paths [next, end) go in this message */
	uint32_t added, dups;
};

static int batch_build(struct nl_msg *msg, const void *in)
{
	struct batch *b = (struct batch *)in;
	size_t used = NLMSG_HDRLEN + 64;

	if (nla_put_u32(msg, TANDEM_A_DATASET_ID, b->id))
		return -EMSGSIZE;
	for (b->end = b->next; b->end < b->fl->n; b->end++) {
		const char *p = b->fl->paths[b->end];

		used += NLA_ALIGN(NLA_HDRLEN + strlen(p) + 1);
		if (used > FILE_BATCH_BYTES && b->end > b->next)
			break;
		if (nla_put_string(msg, TANDEM_A_FILE_PATH, p))
			return -EMSGSIZE;
	}
	return 0;
}

static int batch_parse(struct nlattr **tb, void *out)
{
	struct batch *b = out;

	if (!tb[TANDEM_A_FILES_ADDED] || !tb[TANDEM_A_FILES_DUPLICATE])
		return -EBADMSG;
	b->added += nla_get_u32(tb[TANDEM_A_FILES_ADDED]);
	b->dups += nla_get_u32(tb[TANDEM_A_FILES_DUPLICATE]);
	return 0;
}

int dataset_add_files(uint32_t id, const struct file_list *fl, uint32_t *added,
		      uint32_t *dups)
{
	struct batch b = { .id = id, .fl = fl };
	struct tnl_req req = {
		.cmd = TANDEM_CMD_FILE_ADD, .size = FILE_BATCH_BYTES + 4096,
		.build = batch_build, .in = &b, .parse = batch_parse, .out = &b,
	};
	int err = 0;

	while (b.next < fl->n) {
		err = tnl_request(&req);
		if (err)
			break;
		b.next = b.end;
	}
	*added = b.added;
	*dups = b.dups;
	return err;
}

int dataset_del(uint32_t id)
{
	struct tnl_req req = { .cmd = TANDEM_CMD_DATASET_DEL, .build = put_id, .in = &id };

	return tnl_request(&req);
}

/* Without a tracker linked in, registering with the module is all there is. */
__attribute__((weak)) int dataset_registered_hook(uint32_t id, const char *name,
						  const struct file_list *fl)
{
	(void)id;
	(void)name;
	(void)fl;
	return 0;
}

static int cmd_dataset_add(int argc, char **argv)
{
	struct file_list fl = { 0 };
	uint32_t id = 0, added = 0, dups = 0;
	struct tnl_req req = {
		.cmd = TANDEM_CMD_DATASET_ADD, .build = put_name, .in = argv[1],
		.parse = id_parse, .out = &id,
	};
	int err;

	if (argc < 3)
		return ctl_usage("dataset", "add");
	err = file_list_collect(&fl, argv + 2, argc - 2);
	if (err)
		goto out;
	if (!fl.n) {
		ctl_err("no regular files under the given paths");
		err = -ENOENT;
		goto out;
	}
	err = tnl_request(&req);
	if (err)
		goto out;
	err = dataset_add_files(id, &fl, &added, &dups);
	if (err) {
		/* a half-registered dataset is worse than none */
		dataset_del(id);
		goto out;
	}
	err = dataset_registered_hook(id, argv[1], &fl);
	out_obj_open(NULL);
	out_u64("id", "dataset %llu", id);
	out_str("name", " (%s):", argv[1]);
	out_u64("files", " %llu files registered", added);
	out_u64("duplicates", ", %llu duplicates\n", dups);
	out_obj_close();
out:
	file_list_free(&fl);
	return err;
}

static void print_ds(const struct ds_info *ds)
{
	char size[32], cached[32];

	out_u64("id", "%-5llu ", ds->id);
	out_str("name", "%-24s ", ds->name);
	out_u64("files", "%8llu ", ds->nfiles);
	out_u64("bytes", NULL, ds->bytes);
	out_text("%12s ", fmt_bytes(size, sizeof(size), ds->bytes));
	out_u64("pages_cached", NULL, ds->pages);
	out_text("%12s\n", fmt_bytes(cached, sizeof(cached),
				     ds->pages * (uint64_t)sysconf(_SC_PAGESIZE)));
}

static void print_ds_header(void)
{
	out_text("%-5s %-24s %8s %12s %12s\n", "ID", "NAME", "FILES", "SIZE", "CACHED");
}

static int list_parse(struct nlattr **tb, void *out)
{
	struct ds_info ds;
	int err = ds_info_parse(tb, &ds);

	(void)out;
	if (!err) {
		out_obj_open(NULL);
		print_ds(&ds);
		out_obj_close();
	}
	return err;
}

static int cmd_dataset_list(int argc, char **argv)
{
	struct tnl_req req = { .cmd = TANDEM_CMD_DATASET_GET, .dump = true, .parse = list_parse };
	int err;

	(void)argv;
	if (argc > 1)
		return ctl_usage("dataset", "list");
	err = tnl_open(false);
	if (err)
		return err;
	print_ds_header();
	out_arr_open(NULL);
	err = tnl_request(&req);
	out_arr_close();
	return err;
}

static int file_parse(struct nlattr **tb, void *out)
{
	char size[32];

	(void)out;
	if (!tb[TANDEM_A_FILE_PATH] || !tb[TANDEM_A_FILE_SIZE])
		return -EBADMSG;
	out_obj_open(NULL);
	out_str("path", "  %s", nla_get_string(tb[TANDEM_A_FILE_PATH]));
	if (tb[TANDEM_A_FILE_DEV])
		out_u64("dev", NULL, nla_get_u64(tb[TANDEM_A_FILE_DEV]));
	if (tb[TANDEM_A_FILE_INO])
		out_u64("ino", NULL, nla_get_u64(tb[TANDEM_A_FILE_INO]));
	out_u64("bytes", NULL, nla_get_u64(tb[TANDEM_A_FILE_SIZE]));
	out_text("  %s", fmt_bytes(size, sizeof(size), nla_get_u64(tb[TANDEM_A_FILE_SIZE])));
	if (tb[TANDEM_A_FILE_PAGES_CACHED])
		out_u64("pages_cached", ", %llu pages cached",
			nla_get_u64(tb[TANDEM_A_FILE_PAGES_CACHED]));
	out_text("\n");
	out_obj_close();
	return 0;
}

static int cmd_dataset_show(int argc, char **argv)
{
	struct ds_info ds;
	uint32_t id;
	struct tnl_req get = {
		.cmd = TANDEM_CMD_DATASET_GET, .build = put_id, .in = &id,
		.parse = ds_info_parse, .out = &ds,
	};
	struct tnl_req files = {
		.cmd = TANDEM_CMD_FILE_GET, .dump = true, .build = put_id, .in = &id,
		.parse = file_parse,
	};
	int err;

	if (argc != 2)
		return ctl_usage("dataset", "show");
	err = dataset_resolve(argv[1], &id);
	if (err)
		return err;
	err = tnl_request(&get);
	if (err)
		return err;
	print_ds_header();
	out_obj_open(NULL);
	print_ds(&ds);
	out_text("files:\n");
	out_arr_open("file_list");
	err = tnl_request(&files);
	out_arr_close();
	out_obj_close();
	return err;
}

static int cmd_dataset_del(int argc, char **argv)
{
	uint32_t id;
	int err;

	if (argc != 2)
		return ctl_usage("dataset", "del");
	err = dataset_resolve(argv[1], &id);
	if (err)
		return err;
	return dataset_del(id);
}

TANDEM_CMD(dataset_add, "dataset", "add", cmd_dataset_add, "NAME PATH...",
	   "register a dataset: files, and directories walked recursively (regular files only)");
TANDEM_CMD(dataset_list, "dataset", "list", cmd_dataset_list, "",
	   "list registered datasets with their size and cached bytes");
TANDEM_CMD(dataset_show, "dataset", "show", cmd_dataset_show, "ID|NAME",
	   "one dataset and its files");
TANDEM_CMD(dataset_del, "dataset", "del", cmd_dataset_del, "ID|NAME",
	   "unregister a dataset (its page cache is left alone)");
