// SPDX-License-Identifier: GPL-2.0
/*
 * Making and removing a scratch: its state folder, a tmpfs mounted with
 * size=<size>,mpol=bind:<node>,mode=0700,uid=<owner>[,huge=always], and the
 * drainer.
 * Root only: mount(2) needs CAP_SYS_ADMIN, and the tmpfs takes memory of a
 * node every job on the host shares.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/numa.h"
#include "lib/util.h"
#include "scratch/internal.h"

static int need_root(const char *what)
{
	if (!geteuid())
		return 0;
	ctl_err("scratch %s needs root (it %s a tmpfs)", what,
		!strcmp(what, "create") ? "mounts" : "unmounts");
	return -EPERM;
}

/* the node exists with memory, and the size fits in it */
static int check_node(const struct scratch_cfg *c)
{
	struct numa_node nodes[NUMA_MAX_NODES];
	int n = numa_read_nodes(NULL, nodes, NUMA_MAX_NODES);

	for (int i = 0; i < n; i++) {
		if (nodes[i].id != c->node)
			continue;
		if (c->size > nodes[i].mem_total_kb * 1024ULL) {
			ctl_err("--size %llu bytes is more than node %d's memory (%llu KiB)",
				(unsigned long long)c->size, c->node,
				(unsigned long long)nodes[i].mem_total_kb);
			return -EINVAL;
		}
		return 0;
	}
	ctl_err("node %d is not an online memory node", c->node);
	return -ENODEV;
}

/* the drain folder, as its real path: it must exist (nothing is made) */
static int check_drain_to(struct scratch_cfg *c)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(c->drain_to, real) || stat(real, &st)) {
		ctl_err("--drain-to %s: %s", c->drain_to, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		ctl_err("--drain-to %s: not a directory", c->drain_to);
		return -ENOTDIR;
	}
	if (strchr(real, '\n')) {
		ctl_err("--drain-to: a path with a newline is not taken");
		return -EINVAL;
	}
	/* a drain into the scratch would drain its own copies again */
	if (!strncmp(real, c->dir, strlen(c->dir)) &&
	    (!real[strlen(c->dir)] || real[strlen(c->dir)] == '/')) {
		ctl_err("--drain-to %s: inside the scratch's own folder", c->drain_to);
		return -EINVAL;
	}
	snprintf(c->drain_to, sizeof(c->drain_to), "%s", real);
	return 0;
}

/* mkdir with exactly mode (no umask); EEXIST is fine for a parent */
static int make_dir(const char *dir, mode_t mode, bool exist_ok)
{
	if (mkdir(dir, mode)) {
		if (errno != EEXIST || !exist_ok)
			return -errno;
		return 0;
	}
	return chmod(dir, mode) ? -errno : 0;
}

static int make_root(void)
{
	char path[PATH_MAX], *slash;
	int err;

	/* the parents of the root, then the root: 0755, so owners reach their mount */
	snprintf(path, sizeof(path), "%s", scratch_root());
	for (slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		err = make_dir(path, 0755, true);
		*slash = '/';
		if (err)
			return err;
	}
	return make_dir(path, 0755, true);
}

static void remove_state(const struct scratch_cfg *c)
{
	static const char *const files[] = {
		"config", ".config.tmp", "drainer.pid", "drained.log", "drainer.err",
	};
	char path[PATH_MAX + 16];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", c->dir, files[i]);
		unlink(path);
	}
	rmdir(c->mnt);
	rmdir(c->dir);
}

/*
 * huge=always when c->huge (scratch create --pages; the CXL node's
 * default, and never on a kernel without THP, which refuses the option): a
 * checkpoint is written by appending, which within_size would never give a
 * huge page. 2 MiB folios cut a write's per-page allocation and page-cache
 * insertion by 512 (Documentation/scratch.md, "Huge pages", has what that
 * was measured to change). A file's tail may hold a huge page beyond its
 * end: the kernel splits those under memory pressure and when the size is
 * reached, and uses small pages where no huge one is free on the node.
 */
static int do_mount(const struct scratch_cfg *c)
{
	char src[SCRATCH_NAME_MAX + 16], opts[160];

	snprintf(src, sizeof(src), "tandem-scratch-%s", c->name);
	snprintf(opts, sizeof(opts), "size=%llu,mpol=bind:%d,mode=0700,uid=%u,gid=%u%s",
		 (unsigned long long)c->size, c->node, (unsigned)c->uid, (unsigned)c->gid,
		 c->huge ? ",huge=always" : "");
	if (mount(src, c->mnt, "tmpfs", MS_NOSUID | MS_NODEV, opts)) {
		ctl_err("mount tmpfs -o %s on %s: %s", opts, c->mnt, strerror(errno));
		return -errno;
	}
	return 0;
}

int scratch_create(struct scratch_cfg *c)
{
	pid_t pid;
	int err;

	err = need_root("create") ?: check_node(c) ?: check_drain_to(c);
	if (err)
		return err;
	c->created = (double)time(NULL);
	err = make_root();
	if (err) {
		ctl_err("%s: %s", scratch_root(), strerror(-err));
		return err;
	}
	err = make_dir(c->dir, 0755, false);
	if (err) {
		if (err == -EEXIST)
			ctl_err("scratch '%s' exists already (tandemctl scratch show %s)", c->name, c->name);
		else
			ctl_err("%s: %s", c->dir, strerror(-err));
		return err;
	}
	err = make_dir(c->mnt, 0700, false) ?: scratch_cfg_save(c);
	if (err) {
		ctl_err("%s: %s", c->dir, strerror(-err));
		goto remove_dir;
	}
	err = scratch_record_create(c);
	if (err)
		goto remove_dir;
	err = do_mount(c);
	if (err)
		goto remove_record;
	err = scratch_drainer_start(c, &pid);
	if (err)
		goto unmount;
	return 0;
unmount:
	umount(c->mnt);
remove_record:
	scratch_record_remove(c);
remove_dir:
	remove_state(c);
	return err;
}

/* what is not durable now; -EBUSY (said) when something is and !force */
static int undrained(const struct scratch_cfg *c, bool force, struct scratch_status *st)
{
	int err;

	scratch_status_free(st);
	err = scratch_status_get(c, st);
	if (err)
		return err;
	if (st->pending_files && !force) {
		ctl_err("scratch %s: %llu files (%llu bytes) not drained yet; wait for them "
			"(tandemctl scratch show %s) or give --force to drop them", c->name,
			(unsigned long long)st->pending_files,
			(unsigned long long)st->pending_bytes, c->name);
		return -EBUSY;
	}
	return 0;
}

int scratch_del(const struct scratch_cfg *c, bool force, struct scratch_status *st)
{
	pid_t pid;
	int err;

	memset(st, 0, sizeof(*st));
	err = need_root("del") ?: undrained(c, force, st);
	if (err)
		return err;
	scratch_drainer_stop(c);
	/* a file closed since: checked with the drainer stopped */
	err = undrained(c, force, st);
	if (err)
		goto restart;
	if (umount(c->mnt)) {
		err = -errno;
		ctl_err("scratch %s: unmount %s: %s", c->name, c->mnt,
			err == -EBUSY ? "in use (a process has a file or folder open there)"
				      : strerror(-err));
		goto restart;
	}
	remove_state(c);
	scratch_record_remove(c);	/* last: a crash before it leaves it "lost" */
	return 0;
restart:
	if (scratch_drainer_start(c, &pid))
		ctl_err("scratch %s: restart its drainer with 'tandemctl scratch drain %s'",
			c->name, c->name);
	return err;
}
