// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl run's hooks: tandem.ko and the tracker behind the release
 * engine's one hook table (see run_hooks.h). A part that cannot be set up
 * says so in one line and is left out; the instances run regardless.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "module/module.h"
#include "lib/files.h"
#include "module/nl.h"
#include "release/hooks.h"
#include "tracker/tracker.h"

static struct {
	struct run_hooks_opts o;
	struct run_hooks_state st;
	const struct lg_dataset *ds;
	const struct rel_hooks *trk;	/* the tracker's hooks while it is in use */
} rh;

/* ---- tandem.ko ---- */

/* tandem.ko takes [A-Za-z0-9._-], 1..63 characters; others become '_' */
static void dataset_name(const char *given, const char *dir, char *name, size_t len)
{
	char tmp[PATH_MAX];
	const char *base;
	size_t n;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	n = strlen(tmp);
	while (n > 1 && tmp[n - 1] == '/')
		tmp[--n] = 0;
	base = strrchr(tmp, '/');
	base = base && base[1] ? base + 1 : tmp;
	snprintf(name, len, "%s", given ? given : base);
	for (char *p = name; *p; p++)
		if (!(*p == '.' || *p == '_' || *p == '-' || (*p >= '0' && *p <= '9') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			*p = '_';
	if (!*name)
		snprintf(name, len, "dataset");
}

struct find_ctx {
	const char *name;
	uint32_t id;
};

static int find_parse(struct nlattr **tb, void *out)
{
	struct find_ctx *f = out;

	if (!tb[TANDEM_A_DATASET_ID] || !tb[TANDEM_A_DATASET_NAME])
		return -EBADMSG;
	if (!strcmp(nla_get_string(tb[TANDEM_A_DATASET_NAME]), f->name))
		f->id = nla_get_u32(tb[TANDEM_A_DATASET_ID]);
	return 0;
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

/* The dataset called name, created when there is none (a rerun reuses it). */
static int module_dataset(const char *name, uint32_t *id, bool *created)
{
	struct find_ctx f = { .name = name };
	struct tnl_req find = {
		.cmd = TANDEM_CMD_DATASET_GET, .dump = true, .parse = find_parse, .out = &f,
	};
	struct tnl_req add = {
		.cmd = TANDEM_CMD_DATASET_ADD, .build = put_name, .in = name,
		.parse = id_parse, .out = id,
	};
	int err = tnl_request(&find);

	*created = false;
	if (err)
		return err;
	if (f.id) {
		*id = f.id;
		return 0;
	}
	*created = true;
	return tnl_request(&add);
}

/* tandem.ko wants absolute paths */
static int abs_paths(const struct lg_dataset *ds, struct file_list *fl)
{
	fl->paths = calloc(ds->nfiles ? ds->nfiles : 1, sizeof(char *));
	if (!fl->paths)
		return -ENOMEM;
	fl->cap = ds->nfiles;
	for (fl->n = 0; fl->n < ds->nfiles; fl->n++) {
		fl->paths[fl->n] = realpath(ds->paths[fl->n], NULL);
		if (!fl->paths[fl->n])
			return -errno;
	}
	return 0;
}

static int module_register(const struct lg_dataset *ds)
{
	struct run_hooks_state *st = &rh.st;
	struct file_list fl = { 0 };
	int err;

	if (tnl_open(true))
		return 0;	/* not loaded: nothing to register with */
	err = abs_paths(ds, &fl);
	if (!err)
		err = module_dataset(st->name, &st->module_id, &st->module_created);
	if (!err)
		err = dataset_add_files(st->module_id, &fl, &st->files_added, &st->files_present);
	if (err && st->module_created)
		dataset_del(st->module_id);	/* a half-registered dataset is worse than none */
	if (err)
		ctl_err("tandem.ko: dataset %s not registered (%s); running without steering",
			st->name, strerror(-err));
	st->module = !err;
	file_list_free(&fl);
	return err;
}

static int module_residency(double *bytes, int max_nodes, int *nnodes)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct dataset_state ds;
	int err = dataset_state_get(rh.st.module_id, &ds);

	if (err)
		return err;
	*nnodes = 0;
	for (int i = 0; i < DATASET_MAX_NODES && i < max_nodes; i++) {
		bytes[i] = (double)ds.node_pages[i] * psz;
		if (ds.node_pages[i])
			*nnodes = i + 1;
	}
	rh.st.steered = ds.cnt[TANDEM_CNT_STEERED];
	rh.st.prefetched = ds.cnt[TANDEM_CNT_PREFETCHED];
	return 0;
}

/* ---- residency without tandem.ko ---- */

static int file_nodes(const char *path, double *bytes, int max_nodes, int *nnodes)
{
	long psz = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0, *status = NULL;
	unsigned char *vec = NULL;
	void **pages = NULL;
	unsigned long m = 0;
	volatile char sink;
	size_t size, np;
	char *map;

	if (fd < 0)
		return -errno;
	size = lseek(fd, 0, SEEK_END);
	np = (size + psz - 1) / psz;
	if (!np)
		goto close_fd;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto close_fd;
	}
	vec = malloc(np);
	pages = malloc(np * sizeof(*pages));
	status = malloc(np * sizeof(*status));
	if (!vec || !pages || !status)
		err = -ENOMEM;
	else if (mincore(map, size, vec))
		err = -errno;
	for (size_t i = 0; !err && i < np; i++) {
		if (!(vec[i] & 1))
			continue;	/* not cached: touching it would read it */
		sink = map[i * psz];	/* map the cached page so move_pages sees it */
		pages[m++] = map + i * psz;
	}
	(void)sink;
	if (!err && m && syscall(SYS_move_pages, 0, m, pages, NULL, status, 0))
		err = -errno;
	for (unsigned long i = 0; !err && i < m; i++) {
		if (status[i] < 0 || status[i] >= max_nodes)
			continue;	/* evicted meanwhile */
		bytes[status[i]] += psz;
		if (status[i] + 1 > *nnodes)
			*nnodes = status[i] + 1;
	}
	free(status);
	free(pages);
	free(vec);
	munmap(map, size);
close_fd:
	close(fd);
	return err;
}

int run_residency_scan(const struct lg_dataset *ds, double *bytes, int max_nodes, int *nnodes)
{
	int err = 0;

	memset(bytes, 0, sizeof(*bytes) * max_nodes);
	*nnodes = 0;
	for (uint32_t f = 0; f < ds->nfiles && !err; f++)
		err = file_nodes(ds->paths[f], bytes, max_nodes, nnodes);
	return err;
}

/* ---- the hook table ---- */

static int rh_dataset_register(void *ctx, const char *dir, const struct lg_dataset *ds)
{
	int err;

	(void)ctx;
	rh.ds = ds;
	dataset_name(rh.o.name, dir, rh.st.name, sizeof(rh.st.name));
	if (rh.o.module)
		module_register(ds);
	if (!rh.o.tracker)
		return 0;
	rh.trk = tracker_rel_hooks();
	err = rh.trk->dataset_register(rh.st.name, dir, ds);
	if (err) {
		ctl_err("tracker: not available (%s); instances run untracked, progress:F "
			"uses read_bytes", strerror(-err));
		rh.trk->finish(NULL);
		rh.trk = NULL;
		return 0;
	}
	rh.st.tracker = tracker_rel_info(&rh.st.tracker_dataset, &rh.st.tracker_loaded_here);
	return 0;
}

static int rh_job_start(void *ctx, int idx, const char *name, pid_t pgid)
{
	(void)ctx;
	return rh.trk ? rh.trk->job_start(NULL, idx, name, pgid) : 0;
}

static void rh_job_exit(void *ctx, int idx, int status)
{
	(void)ctx;
	if (rh.trk)
		rh.trk->job_exit(NULL, idx, status);
}

static int rh_progress(void *ctx, int idx, pid_t pgid, double *fraction)
{
	(void)ctx;
	return rh.trk ? rh.trk->progress(NULL, idx, pgid, fraction) : -ENOENT;
}

static int rh_job_stats(void *ctx, int idx, struct rel_job_stats *st)
{
	(void)ctx;
	return rh.trk ? rh.trk->job_stats(NULL, idx, st) : -ENOENT;
}

static int rh_residency(void *ctx, double *bytes, int max_nodes, int *nnodes)
{
	int err;

	(void)ctx;
	rh.st.residency_source = NULL;
	if (rh.st.module && !(err = module_residency(bytes, max_nodes, nnodes))) {
		rh.st.residency_source = "tandem.ko";
		return 0;
	}
	if (!rh.ds)
		return -ENOENT;
	err = run_residency_scan(rh.ds, bytes, max_nodes, nnodes);
	if (!err)
		rh.st.residency_source = "mincore";
	return err;
}

static void rh_finish(void *ctx)
{
	(void)ctx;
	if (rh.trk)
		rh.trk->finish(NULL);
	rh.trk = NULL;
}

const struct rel_hooks *run_hooks(const struct run_hooks_opts *o)
{
	static const struct rel_hooks hooks = {
		.name = "run",
		.dataset_register = rh_dataset_register,
		.job_start = rh_job_start,
		.job_exit = rh_job_exit,
		.progress = rh_progress,
		.job_stats = rh_job_stats,
		.residency = rh_residency,
		.finish = rh_finish,
	};

	memset(&rh, 0, sizeof(rh));
	rh.o = *o;
	return &hooks;
}

const struct run_hooks_state *run_hooks_state(void)
{
	return &rh.st;
}
