// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/log.h"
#include "lib/files.h"

#define WALK_MAX_DEPTH 64

static int file_list_push(struct file_list *fl, const char *path)
{
	char *copy;

	if (fl->n == fl->cap) {
		size_t cap = fl->cap ? fl->cap * 2 : 256;
		char **p = realloc(fl->paths, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		fl->paths = p;
		fl->cap = cap;
	}
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	fl->paths[fl->n++] = copy;
	return 0;
}

static int walk_dir(struct file_list *fl, const char *dir, int depth)
{
	struct dirent **ents;
	char path[PATH_MAX];
	struct stat st;
	int i, n, err = 0;

	if (depth > WALK_MAX_DEPTH) {
		ctl_err("%s: directories nested deeper than %d", dir, WALK_MAX_DEPTH);
		return -ELOOP;
	}
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		err = -errno;
		ctl_err("%s: %s", dir, strerror(errno));
		return err;
	}
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		if (err || !strcmp(name, ".") || !strcmp(name, ".."))
			goto next;
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "",
			     name) >= (int)sizeof(path)) {
			ctl_err("%s/%s: path too long", dir, name);
			err = -ENAMETOOLONG;
			goto next;
		}
		if (lstat(path, &st)) {
			err = -errno;
			ctl_err("%s: %s", path, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			err = walk_dir(fl, path, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			err = file_list_push(fl, path);
		}
next:
		free(ents[i]);
	}
	free(ents);
	return err;
}

int file_list_collect(struct file_list *fl, char **args, int nargs)
{
	char real[PATH_MAX];
	struct stat st;
	int i, err;

	for (i = 0; i < nargs; i++) {
		if (!realpath(args[i], real) || stat(real, &st)) {
			err = -errno;
			ctl_err("%s: %s", args[i], strerror(errno));
			return err;
		}
		if (S_ISDIR(st.st_mode))
			err = walk_dir(fl, real, 0);
		else if (S_ISREG(st.st_mode))
			err = file_list_push(fl, real);
		else {
			ctl_err("%s: not a regular file or directory", args[i]);
			err = -EINVAL;
		}
		if (err == -ENOMEM)
			ctl_err("out of memory");
		if (err)
			return err;
	}
	return 0;
}

void file_list_free(struct file_list *fl)
{
	for (size_t i = 0; i < fl->n; i++)
		free(fl->paths[i]);
	free(fl->paths);
	fl->paths = NULL;
	fl->n = fl->cap = 0;
}
