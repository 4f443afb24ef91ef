// SPDX-License-Identifier: GPL-2.0
/*
 * Scratch names, their state folders and config files (key=value lines:
 * small, read without a parser, and the same for root and the owner).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "scratch/internal.h"

const char *scratch_root(void)
{
	const char *r = getenv("TANDEM_SCRATCH_DIR");

	return r && *r ? r : SCRATCH_ROOT;
}

const char *scratch_record_root(void)
{
	const char *r = getenv("TANDEM_SCRATCH_RECORD_DIR");

	return r && *r ? r : SCRATCH_RECORD_ROOT;
}

int scratch_name_check(const char *name)
{
	size_t n = strlen(name);

	if (!n || n >= SCRATCH_NAME_MAX || name[0] == '.' ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
		return -EINVAL;
	return 0;
}

void scratch_cfg_paths(struct scratch_cfg *c, const char *name)
{
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->dir, sizeof(c->dir), "%s/%s", scratch_root(), name);
	snprintf(c->mnt, sizeof(c->mnt), "%s/%s/mnt", scratch_root(), name);
	snprintf(c->record, sizeof(c->record), "%s/%s", scratch_record_root(), name);
}

/* one "key=value" line into c; unknown keys are left (a newer tandemctl's) */
static int cfg_line(struct scratch_cfg *c, const char *k, const char *v)
{
	uint64_t u;
	int64_t s;

	if (!strcmp(k, "drain_to"))
		return snprintf(c->drain_to, sizeof(c->drain_to), "%s", v) >= (int)sizeof(c->drain_to)
			? -ENAMETOOLONG : 0;
	if (!strcmp(k, "rate_bps"))
		return parse_double(v, &c->rate);
	if (!strcmp(k, "created"))
		return parse_double(v, &c->created);
	if (!strcmp(k, "node")) {
		if (parse_s64(v, 0, 1023, &s))
			return -EINVAL;
		c->node = (int)s;
		return 0;
	}
	if (strcmp(k, "size") && strcmp(k, "uid") && strcmp(k, "gid") && strcmp(k, "evict") &&
	    strcmp(k, "huge"))
		return 0;
	if (parse_u64(v, UINT64_MAX, &u))
		return -EINVAL;
	if (!strcmp(k, "size"))
		c->size = u;
	else if (!strcmp(k, "uid"))
		c->uid = (uid_t)u;
	else if (!strcmp(k, "gid"))
		c->gid = (gid_t)u;
	else if (!strcmp(k, "huge"))
		c->huge = u != 0;
	else
		c->evict = u != 0;
	return 0;
}

/* config file path into c (its paths set): 0, or -errno (said unless -ENOENT) */
static int cfg_read(const char *path, struct scratch_cfg *c)
{
	char *line = NULL, *eq;
	size_t cap = 0;
	ssize_t len;
	int err = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		err = -errno;
		if (err != -ENOENT)
			ctl_err("%s: %s", path, strerror(-err));
		return err;
	}
	while (!err && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = 0;
		eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = 0;
		err = cfg_line(c, line, eq + 1);
	}
	free(line);
	fclose(f);
	if (err || !c->drain_to[0] || !c->size) {
		ctl_err("%s: not a scratch config", path);
		return -EINVAL;
	}
	return 0;
}

/* the live config, else (any) the durable record's: c->lost */
static int cfg_load(const char *name, struct scratch_cfg *c, bool any)
{
	char path[PATH_MAX + 16];
	int err;

	memset(c, 0, sizeof(*c));
	if (scratch_name_check(name)) {
		ctl_err("bad scratch name '%s'", name);
		return -EINVAL;
	}
	scratch_cfg_paths(c, name);
	snprintf(path, sizeof(path), "%s/config", c->dir);
	err = cfg_read(path, c);
	if (err != -ENOENT)
		return err;
	snprintf(path, sizeof(path), "%s/config", c->record);
	if (access(path, F_OK)) {
		ctl_err("no scratch '%s' (tandemctl scratch list)", name);
		return -ENOENT;
	}
	if (!any) {
		ctl_err("scratch %s was lost at a reboot (tandemctl scratch show %s; "
			"tandemctl scratch del %s)", name, name, name);
		return -ESTALE;
	}
	err = cfg_read(path, c);
	scratch_cfg_paths(c, name);	/* this boot's paths, not the record's */
	c->lost = !err;
	return err;
}

int scratch_cfg_load(const char *name, struct scratch_cfg *c)
{
	return cfg_load(name, c, false);
}

int scratch_cfg_load_any(const char *name, struct scratch_cfg *c)
{
	return cfg_load(name, c, true);
}

/* the config, root's and mode 0644: written to a temporary name, then renamed */
int scratch_cfg_save(const struct scratch_cfg *c)
{
	return scratch_cfg_save_in(c, c->dir);
}

int scratch_cfg_save_in(const struct scratch_cfg *c, const char *dir)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/config", dir);
	snprintf(tmp, sizeof(tmp), "%s/.config.tmp", dir);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "name=%s\nsize=%llu\nnode=%d\ndrain_to=%s\nrate_bps=%.0f\nuid=%u\ngid=%u\n"
		"evict=%d\nhuge=%d\ncreated=%.3f\n", c->name, (unsigned long long)c->size, c->node,
		c->drain_to, c->rate, (unsigned)c->uid, (unsigned)c->gid, c->evict, c->huge,
		c->created);
	return file_commit(f, tmp, path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int scratch_dir_names(const char *dir, bool (*keep)(const char *name),
		      char ***names, size_t *n)
{
	struct dirent *de;
	char **v = NULL, **nv;
	size_t cnt = 0;
	int err = 0;
	DIR *d;

	*names = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;	/* none made yet */
	while (!err && (de = readdir(d))) {
		if (scratch_name_check(de->d_name) || (keep && !keep(de->d_name)))
			continue;
		nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv || !(nv[cnt] = strdup(de->d_name))) {
			v = nv ? nv : v;
			err = -ENOMEM;
			break;
		}
		v = nv;
		cnt++;
	}
	closedir(d);
	if (err) {
		scratch_names_free(v, cnt);
		return err;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_str);
	*names = v;
	*n = cnt;
	return 0;
}

int scratch_names(char ***names, size_t *n)
{
	return scratch_dir_names(scratch_root(), NULL, names, n);
}

void scratch_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int walk_entry(const char *root, const char *rel, const char *name,
		      scratch_walk_fn fn, void *arg)
{
	char path[PATH_MAX], sub[PATH_MAX];
	struct stat st;

	if (snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", name) >= (int)sizeof(sub) ||
	    snprintf(path, sizeof(path), "%s/%s", root, sub) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;	/* removed meanwhile */
	if (S_ISDIR(st.st_mode))
		return scratch_walk(root, sub, fn, arg);
	if (!S_ISREG(st.st_mode))
		return 0;
	return fn(arg, sub, &st);
}

int scratch_walk(const char *root, const char *rel, scratch_walk_fn fn, void *arg)
{
	char path[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d)))
		if (de->d_name[0] != '.')
			err = walk_entry(root, rel, de->d_name, fn, arg);
	closedir(d);
	return err;
}
