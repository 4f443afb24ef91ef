// SPDX-License-Identifier: GPL-2.0
/* The dataset walk (files.h): one rule for every command that takes a DIR. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/log.h"
#include "lib/out.h"

#define WALK_MAX_DEPTH 64

/* an inode taken (file) or walked (directory), in an open-addressing set */
struct file_seen {
	dev_t dev;
	ino_t ino;
	bool used;
};

static size_t seen_hash(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev * 0xbf58476d1ce4e5b9ULL;

	return (h ^ (h >> 29)) & (cap - 1);
}

static int seen_grow(struct file_list *fl)
{
	size_t cap = fl->seen_cap ? fl->seen_cap * 2 : 1024;
	struct file_seen *s = calloc(cap, sizeof(*s)), *old = fl->seen;

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < fl->seen_cap; i++) {
		size_t h;

		if (!old[i].used)
			continue;
		for (h = seen_hash(old[i].dev, old[i].ino, cap); s[h].used; h = (h + 1) & (cap - 1))
			;
		s[h] = old[i];
	}
	free(old);
	fl->seen = s;
	fl->seen_cap = cap;
	return 0;
}

/* 1 if (dev, ino) was there already, 0 if added now, -ENOMEM */
static int seen_add(struct file_list *fl, dev_t dev, ino_t ino)
{
	size_t h;

	if ((fl->nseen + 1) * 2 > fl->seen_cap && seen_grow(fl))
		return -ENOMEM;
	for (h = seen_hash(dev, ino, fl->seen_cap); fl->seen[h].used;
	     h = (h + 1) & (fl->seen_cap - 1))
		if (fl->seen[h].dev == dev && fl->seen[h].ino == ino)
			return 1;
	fl->seen[h] = (struct file_seen){ .dev = dev, .ino = ino, .used = true };
	fl->nseen++;
	return 0;
}

static int list_grow(struct file_list *fl)
{
	size_t cap = fl->cap ? fl->cap * 2 : 256;
	char **p = realloc(fl->paths, cap * sizeof(*p));
	uint64_t *sz;
	dev_t *dv;
	ino_t *in;

	if (!p)
		return -ENOMEM;
	fl->paths = p;
	sz = realloc(fl->sizes, cap * sizeof(*sz));
	if (!sz)
		return -ENOMEM;
	fl->sizes = sz;
	dv = realloc(fl->devs, cap * sizeof(*dv));
	if (!dv)
		return -ENOMEM;
	fl->devs = dv;
	in = realloc(fl->inos, cap * sizeof(*in));
	if (!in)
		return -ENOMEM;
	fl->inos = in;
	fl->cap = cap;
	return 0;
}

/* Take the regular file st at path (a link: its target's real path). */
static int take_file(struct file_list *fl, const char *path, const struct stat *st, bool link)
{
	char *copy;
	int dup = seen_add(fl, st->st_dev, st->st_ino);

	if (dup < 0)
		return dup;
	if (dup) {
		fl->skipped.duplicates++;
		return 0;
	}
	if (fl->n == fl->cap && list_grow(fl))
		return -ENOMEM;
	copy = link ? realpath(path, NULL) : strdup(path);
	if (!copy && link && errno != ENOMEM) {
		ctl_err("%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!copy)
		return -ENOMEM;
	fl->paths[fl->n] = copy;
	fl->sizes[fl->n] = st->st_size;
	fl->devs[fl->n] = st->st_dev;
	fl->inos[fl->n] = st->st_ino;
	fl->bytes += st->st_size;
	fl->n++;
	return 0;
}

/* byte order, whatever the locale (alphasort() uses strcoll()) */
static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int walk_dir(struct file_list *fl, const char *dir, int depth);

/*
 * One entry NAME of the directory open at DFD (PATH is its full path): lstat
 * says whether it is a link, stat what it is. Looked up relative to the
 * directory, not by the full path: at a million files the path walks of
 * stat(2) were a third of a walk's time.
 */
static int walk_entry(struct file_list *fl, int dfd, const char *name, const char *path,
		      int depth)
{
	struct stat lst, st;
	bool link;

	if (fstatat(dfd, name, &lst, AT_SYMLINK_NOFOLLOW)) {
		ctl_err("%s: %s", path, strerror(errno));
		return -errno;
	}
	link = S_ISLNK(lst.st_mode);
	if (link && fstatat(dfd, name, &st, 0)) {
		if (errno != ENOENT && errno != ELOOP) {
			ctl_err("%s: %s", path, strerror(errno));
			return -errno;
		}
		fl->skipped.dangling++;
		return 0;
	}
	if (!link)
		st = lst;
	if (S_ISREG(st.st_mode))
		return take_file(fl, path, &st, link);
	if (!S_ISDIR(st.st_mode)) {
		fl->skipped.special++;
		return 0;
	}
	switch (seen_add(fl, st.st_dev, st.st_ino)) {
	case 0:
		return walk_dir(fl, path, depth + 1);
	case 1:
		fl->skipped.dirs_again++;
		return 0;
	default:
		return -ENOMEM;
	}
}

static int walk_dir(struct file_list *fl, const char *dir, int depth)
{
	struct dirent **ents;
	char path[PATH_MAX];
	int i, n, dfd, err = 0;

	if (depth > WALK_MAX_DEPTH) {
		ctl_err("%s: directories nested deeper than %d", dir, WALK_MAX_DEPTH);
		return -ELOOP;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	n = dfd < 0 ? -1 : scandir(dir, &ents, NULL, name_cmp);
	if (n < 0) {
		err = -errno;
		ctl_err("%s: %s", dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return err;
	}
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		if (err || !strcmp(name, ".") || !strcmp(name, ".."))
			goto next;
		if (name[0] == '.') {
			fl->skipped.hidden++;
			goto next;
		}
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "",
			     name) >= (int)sizeof(path)) {
			ctl_err("%s/%s: path too long", dir, name);
			err = -ENAMETOOLONG;
			goto next;
		}
		err = walk_entry(fl, dfd, name, path, depth);
next:
		free(ents[i]);
	}
	free(ents);
	close(dfd);
	return err;
}

/* A path given explicitly: resolved, then a file or a directory to walk. */
static int collect_one(struct file_list *fl, const char *arg)
{
	char real[PATH_MAX];
	struct stat st;
	int err;

	if (!realpath(arg, real) || stat(real, &st)) {
		err = -errno;
		ctl_err("%s: %s", arg, strerror(errno));
		return err;
	}
	if (S_ISREG(st.st_mode))
		return take_file(fl, real, &st, false);
	if (!S_ISDIR(st.st_mode)) {
		ctl_err("%s: not a regular file or directory", arg);
		return -EINVAL;
	}
	err = seen_add(fl, st.st_dev, st.st_ino);
	if (err < 0)
		return err;
	if (err) {
		fl->skipped.dirs_again++;
		return 0;
	}
	return walk_dir(fl, real, 0);
}

int file_list_collect(struct file_list *fl, char **args, int nargs)
{
	int err;

	for (int i = 0; i < nargs; i++) {
		err = collect_one(fl, args[i]);
		if (err == -ENOMEM)
			ctl_err("out of memory");
		if (err)
			return err;
	}
	return 0;
}

int file_list_read(struct file_list *fl, const char *path)
{
	char line[PATH_MAX + 2];
	FILE *f = fopen(path, "r");
	int err = 0;

	if (!f) {
		err = -errno;
		ctl_err("%s: %s", path, strerror(errno));
		return err;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *p = line;

		line[strcspn(line, "\n")] = 0;
		if (*line && *line != '#')
			err = file_list_collect(fl, &p, 1);
	}
	if (!err && ferror(f)) {
		err = -EIO;
		ctl_err("%s: read error", path);
	}
	fclose(f);
	return err;
}

void file_list_seal(struct file_list *fl)
{
	free(fl->seen);
	fl->seen = NULL;
	fl->nseen = fl->seen_cap = 0;
}

void file_list_free(struct file_list *fl)
{
	for (size_t i = 0; i < fl->n; i++)
		free(fl->paths[i]);
	free(fl->paths);
	free(fl->sizes);
	free(fl->devs);
	free(fl->inos);
	free(fl->seen);
	memset(fl, 0, sizeof(*fl));
}

const char *file_skips_fmt(const struct file_skips *s, char *buf, size_t len)
{
	const struct { const char *what; uint32_t n; } k[] = {
		{ "hidden", s->hidden }, { "special", s->special },
		{ "dangling link", s->dangling }, { "duplicate", s->duplicates },
		{ "directory again", s->dirs_again },
	};
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		if (!k[i].n || off >= len)
			continue;
		off += snprintf(buf + off, len - off, "%s%u %s", off ? ", " : "", k[i].n,
				k[i].what);
	}
	return buf;
}

void file_skips_print(const struct file_skips *s)
{
	char buf[160];

	if (!out_is_json()) {
		if (*file_skips_fmt(s, buf, sizeof(buf)))
			out_text(" (skipped: %s)", buf);
		return;
	}
	out_obj_open("skipped");
	out_u64("hidden", NULL, s->hidden);
	out_u64("special", NULL, s->special);
	out_u64("dangling", NULL, s->dangling);
	out_u64("duplicates", NULL, s->duplicates);
	out_u64("dirs_again", NULL, s->dirs_again);
	out_obj_close();
}

static int file_index_cmp(const void *a, const void *b)
{
	const struct file_index_ent *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

int file_index_make(struct file_index *ix, const dev_t *devs, const ino_t *inos, size_t n)
{
	ix->n = n;
	ix->e = calloc(n ? n : 1, sizeof(*ix->e));
	if (!ix->e)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ix->e[i] = (struct file_index_ent){ devs[i], inos[i], i };
	qsort(ix->e, n, sizeof(*ix->e), file_index_cmp);
	return 0;
}

long file_index_find(const struct file_index *ix, dev_t dev, ino_t ino)
{
	struct file_index_ent key = { dev, ino, 0 }, *hit;

	hit = ix->e ? bsearch(&key, ix->e, ix->n, sizeof(key), file_index_cmp) : NULL;
	return hit ? (long)hit->idx : -1;
}

void file_index_free(struct file_index *ix)
{
	free(ix->e);
	ix->e = NULL;
	ix->n = 0;
}
