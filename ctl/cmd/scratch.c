// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl scratch create|list|show|del|drain: scratch spaces on the CXL
 * node, drained to durable storage (scratch/scratch.h,
 * Documentation/scratch.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/numa.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "model/model.h"
#include "scratch/scratch.h"

/* the drain cap taken from a profile: this fraction of B(1), the store's one-stream bandwidth */
#define SCRATCH_PROFILE_FRACTION	0.25

struct create_cmd {
	struct scratch_cfg cfg;
	const char *profile;
	bool have_node, have_rate;
	int pages;		/* --pages: 1 huge, 0 small, -1 by the node */
};

static const struct option create_opts[] = {
	{ "size", required_argument, NULL, 's' },
	{ "drain-to", required_argument, NULL, 'd' },
	{ "rate", required_argument, NULL, 'r' },
	{ "node", required_argument, NULL, 'n' },
	{ "profile", required_argument, NULL, 'P' },
	{ "evict-drained", no_argument, NULL, 'e' },
	{ "pages", required_argument, NULL, 'p' },
	{ 0 }
};

static int create_opt(struct create_cmd *c, int opt, const char *arg)
{
	int64_t node;

	switch (opt) {
	case 's':
		return units_parse_bytes(arg, &c->cfg.size) || !c->cfg.size ? -EINVAL : 0;
	case 'd':
		return snprintf(c->cfg.drain_to, sizeof(c->cfg.drain_to), "%s", arg) >=
		       (int)sizeof(c->cfg.drain_to) ? -EINVAL : 0;
	case 'r':
		c->have_rate = true;
		return units_parse_rate(arg, &c->cfg.rate) || c->cfg.rate < 1024 ? -EINVAL : 0;
	case 'n':
		c->have_node = true;
		if (parse_s64(arg, 0, NUMA_MAX_NODES - 1, &node))
			return -EINVAL;
		c->cfg.node = (int)node;
		return 0;
	case 'P': c->profile = arg; return 0;
	case 'e': c->cfg.evict = true; return 0;
	case 'p':
		c->pages = !strcmp(arg, "huge") ? 1 : !strcmp(arg, "small") ? 0 : -2;
		return c->pages == -2 ? -EINVAL : 0;
	}
	return -EINVAL;
}

static int create_parse(int argc, char **argv, struct create_cmd *c)
{
	int opt, ret;

	memset(c, 0, sizeof(*c));
	c->pages = -1;
	optind = 0;
	while ((opt = ctl_getopt(argc, argv, "", create_opts, "scratch", "create")) != -1) {
		if (opt == CTL_EUSAGE)
			return opt;
		ret = create_opt(c, opt, optarg);
		if (ret)
			return ctl_usage_err("scratch", "create", "bad value '%s' for --%s", optarg,
					     opt_name(create_opts, opt));
	}
	if (argc - optind != 1)
		return ctl_usage_err("scratch", "create", argc - optind ? "unexpected argument '%s'"
				     : "missing argument%s", argc - optind ? argv[optind + 1] : "");
	if (scratch_name_check(argv[optind]))
		return ctl_usage_err("scratch", "create", "bad name '%s': 1-63 characters of "
				     "A-Z a-z 0-9 . _ - (not starting with '.')", argv[optind]);
	if (!c->cfg.size || !c->cfg.drain_to[0])
		return ctl_usage_err("scratch", "create", "--size and --drain-to are required");
	if (c->have_rate && c->profile)
		return ctl_usage_err("scratch", "create", "--rate or --profile, not both");
	scratch_cfg_paths(&c->cfg, argv[optind]);
	return 0;
}

/* --node, else the CXL node as tandem.ko would pick it; none: refused */
static int pick_node(struct create_cmd *c)
{
	struct numa_node nodes[NUMA_MAX_NODES];
	int n, node;

	if (c->have_node)
		return 0;
	n = numa_read_nodes(NULL, nodes, NUMA_MAX_NODES);
	node = numa_cpuless_node(nodes, n);
	if (node < 0) {
		ctl_err("no CPU-less (CXL) memory node on this host: give --node N to put the "
			"scratch in node N's memory");
		return -ENODEV;
	}
	c->cfg.node = node;
	return 0;
}

/*
 * --pages, else huge pages on a node without CPUs and small ones on a node
 * with CPUs (Documentation/scratch.md, "Huge pages"); small ones on a
 * kernel without THP, whose tmpfs refuses huge=. A node not found is
 * scratch_create()'s to refuse.
 */
static void pick_pages(struct create_cmd *c)
{
	struct numa_node nodes[NUMA_MAX_NODES];
	int n;

	c->cfg.huge = c->pages > 0;
	if (c->pages < 0) {
		n = numa_read_nodes(NULL, nodes, NUMA_MAX_NODES);
		for (int i = 0; i < n; i++)
			if (nodes[i].id == c->cfg.node)
				c->cfg.huge = !nodes[i].has_cpus;
	}
	if (c->cfg.huge && access("/sys/kernel/mm/transparent_hugepage", F_OK)) {
		ctl_err("scratch %s: this kernel has no transparent huge pages: 4 KiB pages",
			c->cfg.name);
		c->cfg.huge = false;
	}
}

/* --profile: a quarter of B(1), so that the jobs' reads keep the rest */
static int rate_from_profile(struct create_cmd *c)
{
	struct profile p;
	char err[256];
	int ret;

	if (!c->profile)
		return 0;
	profile_init(&p);
	ret = profile_load(c->profile, &p, err, sizeof(err));
	if (ret)
		ctl_err("%s: %s", c->profile, err);
	else if (p.nbw < 1 || p.bw[0] <= 0)
		ctl_err("%s: no storage bandwidth B(1) in the profile", c->profile);
	else
		c->cfg.rate = p.bw[0] * SCRATCH_PROFILE_FRACTION;
	if (!ret && (p.nbw < 1 || p.bw[0] <= 0))
		ret = -EINVAL;
	profile_free(&p);
	return ret;
}

/* the owner: whoever ran sudo, else the caller */
static void pick_owner(struct scratch_cfg *c)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	uint32_t v;

	c->uid = getuid();
	c->gid = getgid();
	if (!c->uid && u && g && !parse_u32(u, &v)) {
		c->uid = v;
		if (!parse_u32(g, &v))
			c->gid = v;
	}
}

/*
 * A scratch is a tmpfs: its pages are not reclaimable without swap. Filling
 * one larger than its node's free memory reclaims that node's page cache (a
 * dataset steered there is read again), and larger than that too leaves the
 * node short, where the kernel OOM-kills a process: on a node with CPUs, a
 * training job (Documentation/scratch.md, "Sizing"). Said once, at create,
 * from the node's memory now; the scratch is made all the same.
 */
static void warn_memory(const struct scratch_cfg *c)
{
	struct numa_node nodes[NUMA_MAX_NODES];
	char sz[32], fr[32], fc[32];
	uint64_t free_b, file_b;
	int n = numa_read_nodes(NULL, nodes, NUMA_MAX_NODES);

	for (int i = 0; i < n; i++) {
		if (nodes[i].id != c->node || !nodes[i].mem_total_kb)
			continue;
		free_b = nodes[i].mem_free_kb * 1024;
		file_b = nodes[i].lru_file_kb * 1024;
		if (c->size <= free_b)
			return;
		fmt_bytes(sz, sizeof(sz), c->size);
		fmt_bytes(fr, sizeof(fr), free_b);
		fmt_bytes(fc, sizeof(fc), file_b);
		if (c->size > free_b + file_b)
			ctl_err("warning: scratch %s: %s on node %d, which has %s free and %s of "
				"page cache now: a tmpfs page is not reclaimable without swap, so a full "
				"scratch leaves node %d short of memory and the kernel may OOM-kill a "
				"process%s", c->name, sz, c->node, fr, fc, c->node,
				nodes[i].has_cpus ? " (a node with CPUs: the training jobs' memory is there)" : "");
		else
			ctl_err("warning: scratch %s: %s on node %d, which has %s free now: filling "
				"it reclaims up to the difference from the node's %s of page cache (a "
				"dataset cached there is read again)", c->name, sz, c->node, fr, fc);
		return;
	}
}

static void print_rate(double rate)
{
	char b[32];

	out_double("rate_bps", NULL, rate);
	if (rate > 0)
		out_text("at %s", units_fmt_rate(rate, b, sizeof(b)));
	else
		out_text("uncapped");
}

static int cmd_scratch_create(int argc, char **argv)
{
	struct create_cmd c;
	char size[32];
	int err;

	err = create_parse(argc, argv, &c);
	if (err)
		return err;
	if (geteuid()) {	/* before anything else it could say */
		ctl_err("scratch create needs root (it mounts a tmpfs)");
		return -EPERM;
	}
	err = pick_node(&c) ?: rate_from_profile(&c);
	if (err)
		return err;
	pick_pages(&c);
	pick_owner(&c.cfg);
	err = scratch_create(&c.cfg);
	if (err)
		return err;
	warn_memory(&c.cfg);
	out_obj_open(NULL);
	out_str("name", "scratch %s:", c.cfg.name);
	out_u64("size_bytes", NULL, c.cfg.size);
	out_text(" %s", fmt_bytes(size, sizeof(size), c.cfg.size));
	out_s64("node", " on node %lld", c.cfg.node);
	out_str("mount", " at %s", c.cfg.mnt);
	out_str("drain_to", ", drained to %s ", c.cfg.drain_to);
	print_rate(c.cfg.rate);
	out_bool("huge_pages", NULL, c.cfg.huge);
	out_s64("drainer_pid", " (drainer pid %lld)\n", scratch_drainer_pid(&c.cfg));
	out_obj_close();
	return 0;
}

static void print_summary(const struct scratch_cfg *c, const struct scratch_status *st)
{
	char size[32], used[32];

	out_str("name", "%-16s ", c->name);
	out_s64("node", "%4lld ", c->node);
	out_u64("size_bytes", NULL, c->size);
	out_text("%10s ", fmt_bytes(size, sizeof(size), c->size));
	out_u64("used_bytes", NULL, st->used_bytes);
	out_text("%10s ", fmt_bytes(used, sizeof(used), st->used_bytes));
	out_u64("uid", "%6llu ", c->uid);
	out_s64("drainer_pid", c->lost ? NULL : "%8lld ", st->drainer);
	out_bool("lost_at_reboot", NULL, c->lost);
	if (c->lost)
		out_text("%8s ", "lost");
	out_str("mount", NULL, c->mnt);
	out_str("drain_to", "%s\n", c->drain_to);
}

static void print_header(void)
{
	out_text("%-16s %4s %10s %10s %6s %8s %s\n", "NAME", "NODE", "SIZE", "USED", "UID",
		 "DRAINER", "DRAIN_TO");
}

/* the scratches lost at a reboot: their records (state folders gone) */
static int list_lost(void)
{
	struct scratch_status st = { 0 };
	struct scratch_cfg c;
	char **names;
	size_t n;
	int err;

	err = scratch_lost_names(&names, &n);
	if (err) {
		ctl_err("%s: %s", scratch_record_root(), strerror(-err));
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		if (scratch_cfg_load_any(names[i], &c) || !c.lost)
			continue;	/* made again meanwhile, or unreadable: said */
		out_obj_open(NULL);
		print_summary(&c, &st);
		out_obj_close();
	}
	scratch_names_free(names, n);
	return 0;
}

static int cmd_scratch_list(int argc, char **argv)
{
	struct scratch_status st = { 0 };
	struct scratch_cfg c;
	char **names;
	size_t n;
	int err;

	err = ctl_args(&argc, argv, 0, 0, "scratch", "list");
	if (err)
		return err;
	err = scratch_names(&names, &n);
	if (err) {
		ctl_err("%s: %s", scratch_root(), strerror(-err));
		return err;
	}
	print_header();
	out_arr_open(NULL);
	for (size_t i = 0; i < n; i++) {
		if (scratch_cfg_load(names[i], &c))
			continue;	/* being made or removed: said on stderr */
		/* the mount's use and the drainer only: the files are the owner's */
		st.drainer = scratch_drainer_pid(&c);
		st.used_bytes = scratch_used_bytes(&c);
		out_obj_open(NULL);
		print_summary(&c, &st);
		out_obj_close();
	}
	scratch_names_free(names, n);
	err = list_lost();
	out_arr_close();
	return err;
}

/* "2026-12-06 11:20:01 UTC" */
static const char *fmt_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (t <= 0 || !gmtime_r(&s, &tm))
		return "never";
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
	return buf;
}

static void print_files(const struct scratch_status *st, bool pending_only)
{
	char size[32], when[40];

	for (size_t i = 0; i < st->nfiles; i++) {
		const struct scratch_file *f = &st->files[i];

		if (pending_only && f->drained)
			continue;
		out_obj_open(NULL);
		out_str("path", "  %s", f->path);
		out_u64("bytes", NULL, f->bytes);
		out_text("  %s", fmt_bytes(size, sizeof(size), f->bytes));
		out_bool("drained", NULL, f->drained);
		out_double("durable", NULL, f->durable);
		out_text("  %s\n", f->drained ? fmt_time(f->durable, when, sizeof(when)) : "pending");
		out_obj_close();
	}
}

static void print_state(const struct scratch_status *st)
{
	char a[32], b[32], when[40];

	out_u64("drained_files", "  drained: %llu files", st->drained_files);
	out_u64("drained_bytes", NULL, st->drained_bytes);
	out_text(" (%s)", fmt_bytes(a, sizeof(a), st->drained_bytes));
	out_u64("pending_files", ", pending: %llu files", st->pending_files);
	out_u64("pending_bytes", NULL, st->pending_bytes);
	out_text(" (%s)\n", fmt_bytes(b, sizeof(b), st->pending_bytes));
	out_u64("durable_files", "  %llu copies made durable, the last at ", st->durable_files);
	out_double("last_durable", NULL, st->last_durable);
	out_text("%s\n", fmt_time(st->last_durable, when, sizeof(when)));
}

/* each file a lost scratch's journal had queued and not durable */
static void print_lost_files(const struct scratch_lost *l)
{
	char size[32], when[40], dest[32];

	for (size_t i = 0; i < l->nfiles; i++) {
		const struct scratch_lost_file *f = &l->files[i];

		out_obj_open(NULL);
		out_str("path", "  %s", f->path);
		out_u64("bytes", NULL, f->bytes);
		out_text("  %s", fmt_bytes(size, sizeof(size), f->bytes));
		out_double("mtime", NULL, f->mtime);
		out_text("  modified %s, not durable", fmt_time(f->mtime, when, sizeof(when)));
		out_s64("dest_bytes", NULL, f->dest_bytes);
		if (f->dest_bytes < 0)
			out_text("; nothing at the destination\n");
		else
			out_text("; the destination keeps a previous copy (%s)\n",
				 fmt_bytes(dest, sizeof(dest), (uint64_t)f->dest_bytes));
		out_obj_close();
	}
}

/* show of a scratch lost at a reboot: what its journal had queued and not durable */
static int show_lost(const struct scratch_cfg *c)
{
	struct scratch_status st = { 0 };
	struct scratch_lost l;
	char b[32], when[40];
	int err;

	err = scratch_lost_get(c, &l);
	if (err)
		return err;
	print_header();
	out_obj_open(NULL);
	print_summary(c, &st);
	out_text("  lost at a reboot: its tmpfs and drainer went with it (%s/journal)\n", c->record);
	out_u64("lost_files", "  lost: %llu files queued for drain and not durable", l.nfiles);
	out_u64("lost_bytes", NULL, l.bytes);
	out_text(" (%s)\n", fmt_bytes(b, sizeof(b), l.bytes));
	out_u64("durable_files", "  %llu copies made durable, the last at ", l.durable_files);
	out_double("last_durable", NULL, l.last_durable);
	out_text("%s\n", fmt_time(l.last_durable, when, sizeof(when)));
	out_text("files:\n");
	out_arr_open("files");
	print_lost_files(&l);
	out_arr_close();
	out_obj_close();
	scratch_lost_free(&l);
	return 0;
}

static int cmd_scratch_show(int argc, char **argv)
{
	struct scratch_status st;
	struct scratch_cfg c;
	int err;

	err = ctl_args(&argc, argv, 1, 1, "scratch", "show");
	err = err ?: scratch_cfg_load_any(argv[1], &c);
	if (!err && c.lost)
		return show_lost(&c);
	err = err ?: scratch_status_get(&c, &st);
	if (err)
		return err;
	print_header();
	out_obj_open(NULL);
	print_summary(&c, &st);
	out_text("  drain cap: ");
	print_rate(c.rate);
	out_bool("evict_drained", NULL, c.evict);
	out_text("%s\n", c.evict ? ", files removed from scratch once durable" : "");
	out_bool("huge_pages", NULL, c.huge);
	out_text("  pages: %s\n", c.huge ? "huge (huge=always: 2 MiB where the node has them free)" :
		 "small (4 KiB)");
	if (!st.drainer)
		out_text("  drainer not running: tandemctl scratch drain %s\n", c.name);
	print_state(&st);
	out_text("files:\n");
	out_arr_open("files");
	print_files(&st, false);
	out_arr_close();
	out_obj_close();
	scratch_status_free(&st);
	return 0;
}

static int del_args(int *argc, char **argv, const char *verb, bool *force)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ 0 }
	};
	int opt;

	optind = 0;
	while ((opt = ctl_getopt(*argc, argv, "", opts, "scratch", verb)) != -1) {
		if (opt != 'f')
			return opt;	/* CTL_EUSAGE, printed */
		*force = true;
	}
	if (*argc - optind != 1)
		return ctl_usage_err("scratch", verb, *argc - optind ? "unexpected argument '%s'"
				     : "missing argument%s", *argc - optind ? argv[optind + 1] : "");
	argv[1] = argv[optind];
	*argc = 2;
	return 0;
}

/* del of a scratch lost at a reboot: its record, and the files it lost said */
static int del_lost(const struct scratch_cfg *c)
{
	struct scratch_lost l;
	int err;

	/* an unreadable journal (said) does not keep the record */
	if (scratch_lost_get(c, &l))
		memset(&l, 0, sizeof(l));
	err = scratch_record_del(c);
	if (err) {
		scratch_lost_free(&l);
		return err;
	}
	out_obj_open(NULL);
	out_str("name", "scratch %s deleted (lost at a reboot)", c->name);
	out_u64("dropped_files", ", %llu files it lost reported", l.nfiles);
	out_u64("dropped_bytes", NULL, l.bytes);
	out_text("%s\n", l.nfiles ? ":" : "");
	out_arr_open("dropped");
	print_lost_files(&l);
	out_arr_close();
	out_obj_close();
	scratch_lost_free(&l);
	return 0;
}

static int cmd_scratch_del(int argc, char **argv)
{
	struct scratch_status st = { 0 };
	struct scratch_cfg c;
	bool force = false;
	int err;

	err = del_args(&argc, argv, "del", &force);
	err = err ?: scratch_cfg_load_any(argv[1], &c);
	if (err)
		return err;
	if (c.lost)
		return del_lost(&c);
	err = scratch_del(&c, force, &st);
	if (!err) {
		out_obj_open(NULL);
		out_str("name", "scratch %s deleted", c.name);
		out_u64("dropped_files", ", %llu files not drained dropped", st.pending_files);
		out_u64("dropped_bytes", NULL, st.pending_bytes);
		out_text("%s\n", st.pending_files ? ":" : "");
		out_arr_open("dropped");
		print_files(&st, true);
		out_arr_close();
		out_obj_close();
	}
	scratch_status_free(&st);
	return err;
}

static int cmd_scratch_drain(int argc, char **argv)
{
	struct scratch_status st;
	struct scratch_cfg c;
	pid_t pid;
	int err;

	err = ctl_args(&argc, argv, 1, 1, "scratch", "drain");
	err = err ?: scratch_cfg_load(argv[1], &c);
	if (err)
		return err;
	if (geteuid()) {
		ctl_err("scratch drain needs root (the drainer's state is root's)");
		return -EPERM;
	}
	err = scratch_drainer_start(&c, &pid);
	err = err ?: scratch_status_get(&c, &st);
	if (err)
		return err;
	out_obj_open(NULL);
	out_str("name", "scratch %s:", c.name);
	out_s64("drainer_pid", " drainer started (pid %lld),", pid);
	out_u64("pending_files", " %llu files pending", st.pending_files);
	out_u64("pending_bytes", NULL, st.pending_bytes);
	out_text("\n");
	out_obj_close();
	scratch_status_free(&st);
	return 0;
}

TANDEM_CMD(scratch_create, "scratch", "create", cmd_scratch_create,
	   "NAME --size SIZE --drain-to DIR [--rate R|--profile FILE] [--node N] [--evict-drained] "
	   "[--pages huge|small]",
	   "a tmpfs on the CXL node (or node N) whose closed files are drained to DIR (root)");
TANDEM_CMD(scratch_list, "scratch", "list", cmd_scratch_list, "",
	   "the scratch spaces: node, size, use, drainer");
TANDEM_CMD(scratch_show, "scratch", "show", cmd_scratch_show, "NAME",
	   "one scratch: its files, drained or pending, and when the last became durable");
TANDEM_CMD(scratch_del, "scratch", "del", cmd_scratch_del, "NAME [--force]",
	   "stop the drainer and unmount; refused while files are not drained unless --force (root)");
TANDEM_CMD(scratch_drain, "scratch", "drain", cmd_scratch_drain, "NAME",
	   "start the drainer again (after it was killed or crashed); it rescans the scratch (root)");
