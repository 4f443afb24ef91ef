// SPDX-License-Identifier: GPL-2.0
/*
 * A scratch's durable record: what a reboot keeps of it. The tmpfs and the
 * state folder live under /run and go with a crash; the record lives under
 * scratch_record_root() (/var/lib/tandem/scratch), on disk:
 *   NAME/config    the scratch's config (config.c's format), root's
 *   NAME/journal   the drainer's lines, the owner's (mode 0600), one write each:
 *     Q <bytes> <mtime s>.<ns> <path>           queued, fdatasync'ed before
 *                                               its copy begins
 *     D <time> <bytes> <mtime s>.<ns> <path>    its copy durable (after the
 *                                               rename and the folder's fsync,
 *                                               fdatasync'ed)
 *     G <path>                                  gone from scratch before its turn
 * (paths with '%' and '\n' as %25 and %0A). A scratch whose record is there
 * and whose state folder is not was lost at a reboot; the files it lost are
 * those whose last Q line no D line of the same size and modification time
 * follows. A lost D line (a crash right after the rename) only reports a
 * durable file as lost, never the reverse.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "scratch/internal.h"

/* one journal line as read */
struct jline {
	char *path;
	char kind;		/* Q, D, G */
	uint64_t bytes;
	int64_t mtime_ns;
	double t;		/* D: durable time */
	size_t line;
};

struct jlines {
	struct jline *v;
	size_t n, room;
};

/* append text (one write of O_APPEND) to c's journal, fdatasync'ed when sync */
static void journal_write(const struct scratch_cfg *c, const char *text, bool sync)
{
	char path[PATH_MAX + 16];
	size_t n = strlen(text);
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/journal", c->record);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)	/* none: a scratch made without a record */
			ctl_err("%s: %s", path, strerror(errno));
		return;
	}
	if (write(fd, text, n) != (ssize_t)n || (sync && fdatasync(fd)))
		err = errno ? errno : EIO;
	close(fd);
	if (err)
		ctl_err("%s: %s", path, strerror(err));
}

/* one line: the prefix (the kind and its numbers), then the escaped path */
static void journal_line(const struct scratch_cfg *c, const char *prefix, const char *rel, bool sync)
{
	char *line = malloc(strlen(prefix) + strlen(rel) * 3 + 2);

	if (!line) {
		ctl_err("%s/journal: %s", c->record, strerror(ENOMEM));
		return;
	}
	strcpy(line, prefix);
	scratch_path_esc(rel, line + strlen(prefix));
	strcat(line, "\n");
	journal_write(c, line, sync);
	free(line);
}

void scratch_journal_queued(const struct scratch_cfg *c, const char *rel)
{
	char src[PATH_MAX], pre[64];
	struct stat st;

	if (snprintf(src, sizeof(src), "%s/%s", c->mnt, rel) >= (int)sizeof(src) ||
	    lstat(src, &st) || !S_ISREG(st.st_mode))
		return;	/* gone already: nothing to lose */
	snprintf(pre, sizeof(pre), "Q %llu %lld.%09ld ", (unsigned long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	journal_line(c, pre, rel, true);
}

void scratch_journal_durable(const struct scratch_cfg *c, const char *rel, const struct stat *st)
{
	struct timespec now;
	char pre[96];

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(pre, sizeof(pre), "D %lld.%06ld %llu %lld.%09ld ", (long long)now.tv_sec,
		 now.tv_nsec / 1000, (unsigned long long)st->st_size,
		 (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	journal_line(c, pre, rel, true);
}

void scratch_journal_gone(const struct scratch_cfg *c, const char *rel)
{
	/* not synced: lost, it only reports a removed file as lost */
	journal_line(c, "G ", rel, false);
}

/* mkdir -p of the record root's parents and root, mode 0755 */
static int make_record_root(void)
{
	char path[PATH_MAX], *slash;

	snprintf(path, sizeof(path), "%s", scratch_record_root());
	for (slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
		if (slash)
			*slash = 0;
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		if (!slash)
			return 0;
		*slash = '/';
	}
}

/*
 * The empty journal, given to the owner (the drainer writes it), mode 0600:
 * it names the scratch's files, which another user cannot list in the tmpfs.
 */
static int make_journal(const struct scratch_cfg *c)
{
	char path[PATH_MAX + 16];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/journal", c->record);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0600) || (!geteuid() && fchown(fd, c->uid, c->gid)) || fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

int scratch_record_create(const struct scratch_cfg *c)
{
	int err;

	err = make_record_root();
	if (err) {
		ctl_err("%s: %s", scratch_record_root(), strerror(-err));
		return err;
	}
	if (mkdir(c->record, 0755)) {
		err = -errno;
		if (err == -EEXIST)
			ctl_err("scratch %s: the record of one lost at a reboot is kept in %s "
				"(tandemctl scratch show %s; scratch del %s clears it)", c->name,
				c->record, c->name, c->name);
		else
			ctl_err("%s: %s", c->record, strerror(-err));
		return err;
	}
	err = scratch_cfg_save_in(c, c->record) ?: make_journal(c) ?: fsync_dir(c->record) ?:
	      fsync_dir(scratch_record_root());
	if (err) {
		ctl_err("%s: %s", c->record, strerror(-err));
		scratch_record_remove(c);
	}
	return err;
}

void scratch_record_remove(const struct scratch_cfg *c)
{
	static const char *const files[] = { "config", ".config.tmp", "journal" };
	char path[PATH_MAX + 16];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", c->record, files[i]);
		unlink(path);
	}
	rmdir(c->record);
}

int scratch_record_del(const struct scratch_cfg *c)
{
	char path[PATH_MAX + 16];
	int err;

	if (geteuid()) {
		ctl_err("scratch del needs root (the record of scratch %s is root's)", c->name);
		return -EPERM;
	}
	snprintf(path, sizeof(path), "%s/config", c->record);
	if (unlink(path) && errno != ENOENT) {
		err = -errno;
		ctl_err("%s: %s", path, strerror(-err));
		return err;
	}
	scratch_record_remove(c);
	return 0;
}

/* one journal line into l (a malformed or torn one is skipped) */
static int jline_parse(struct jlines *l, char *line)
{
	struct jline *j, *nv;
	unsigned long long bytes = 0;
	long long sec = 0, nsec = 0;
	int off = 0;
	double t = 0;

	if (line[0] == 'Q' && sscanf(line, "Q %llu %lld.%lld %n", &bytes, &sec, &nsec, &off) != 3)
		return 0;
	if (line[0] == 'D' &&
	    sscanf(line, "D %lf %llu %lld.%lld %n", &t, &bytes, &sec, &nsec, &off) != 4)
		return 0;
	if (line[0] == 'G' && line[1] == ' ')
		off = 2;
	if (!off || !line[off])
		return 0;
	if (l->n == l->room) {
		l->room = l->room ? l->room * 2 : 64;
		nv = realloc(l->v, l->room * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
	}
	j = &l->v[l->n];
	scratch_path_unesc(line + off);
	j->path = strdup(line + off);
	if (!j->path)
		return -ENOMEM;
	*j = (struct jline){ .path = j->path, .kind = line[0], .bytes = bytes,
			     .mtime_ns = sec * 1000000000LL + nsec, .t = t, .line = l->n };
	l->n++;
	return 0;
}

static int jlines_load(const struct scratch_cfg *c, struct jlines *l)
{
	char path[PATH_MAX + 16], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;
	FILE *f;

	memset(l, 0, sizeof(*l));
	snprintf(path, sizeof(path), "%s/journal", c->record);
	f = fopen(path, "r");
	if (!f) {
		err = -errno;
		ctl_err("%s: %s", path, strerror(-err));
		return err;
	}
	while (!err && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n')
			break;	/* torn: the drainer died writing it */
		line[len - 1] = 0;
		err = jline_parse(l, line);
	}
	free(line);
	fclose(f);
	return err;
}

static void jlines_free(struct jlines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmp_jline(const void *a, const void *b)
{
	const struct jline *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* q: the last Q line of one path, if no D line of its size and mtime followed */
static int lost_add(const struct scratch_cfg *c, struct scratch_lost *l, const struct jline *q)
{
	struct scratch_lost_file *f, *nv;
	char dest[PATH_MAX * 2];
	struct stat st;

	nv = realloc(l->files, (l->nfiles + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	l->files = nv;
	f = &l->files[l->nfiles];
	f->path = strdup(q->path);
	if (!f->path)
		return -ENOMEM;
	l->nfiles++;
	f->bytes = q->bytes;
	f->mtime = q->mtime_ns / 1e9;
	snprintf(dest, sizeof(dest), "%s/%s", c->drain_to, q->path);
	f->dest_bytes = lstat(dest, &st) || !S_ISREG(st.st_mode) ? -1 : (int64_t)st.st_size;
	l->bytes += q->bytes;
	return 0;
}

/*
 * The journal's lines of one path, v[0..n): lost when its last queued
 * version (since it was last gone) has no D line of its size and mtime (a
 * file closed again unchanged is queued after its D line, and not copied).
 */
static int lost_path(const struct scratch_cfg *c, struct scratch_lost *l, const struct jline *v,
		     size_t n)
{
	const struct jline *q = NULL;
	size_t i, from = 0;

	for (i = 0; i < n; i++) {
		if (v[i].kind == 'Q')
			q = &v[i];
		else if (v[i].kind == 'G')
			q = NULL, from = i + 1;
	}
	if (!q)
		return 0;
	for (i = from; i < n; i++)
		if (v[i].kind == 'D' && v[i].bytes == q->bytes && v[i].mtime_ns == q->mtime_ns)
			return 0;
	return lost_add(c, l, q);
}

int scratch_lost_get(const struct scratch_cfg *c, struct scratch_lost *l)
{
	struct jlines j;
	size_t i, k;
	int err;

	memset(l, 0, sizeof(*l));
	err = jlines_load(c, &j);
	if (err)
		goto out;
	for (i = 0; i < j.n; i++) {
		if (j.v[i].kind != 'D')
			continue;
		l->durable_files++;
		if (j.v[i].t > l->last_durable)
			l->last_durable = j.v[i].t;
	}
	if (j.n)
		qsort(j.v, j.n, sizeof(*j.v), cmp_jline);
	for (i = 0; !err && i < j.n; i = k) {
		for (k = i + 1; k < j.n && !strcmp(j.v[k].path, j.v[i].path); k++)
			;
		err = lost_path(c, l, j.v + i, k - i);
	}
out:
	jlines_free(&j);
	if (err)
		scratch_lost_free(l);
	return err;
}

void scratch_lost_free(struct scratch_lost *l)
{
	for (size_t i = 0; i < l->nfiles; i++)
		free(l->files[i].path);
	free(l->files);
	memset(l, 0, sizeof(*l));
}

/* a record whose state folder is gone */
static bool is_lost(const char *name)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/%s/config", scratch_root(), name);
	if (!access(path, F_OK))
		return false;
	snprintf(path, sizeof(path), "%s/%s/config", scratch_record_root(), name);
	return !access(path, F_OK);
}

int scratch_lost_names(char ***names, size_t *n)
{
	return scratch_dir_names(scratch_record_root(), is_lost, names, n);
}
