// SPDX-License-Identifier: GPL-2.0
/*
 * What the tracker pins, whether it is loaded, and unloading it:
 * everything that works on the pin directory as a whole (tracker.h). Where
 * the directory is (tracker_dir()) is tracker.c's, beneath every file here.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracker/internal.h"
#include "tracker/tracker.h"

const char *const tracker_pinned_maps[] = {
	"files", "pages", "tasks", "jobs", "datasets", "counts", "matrix",
	"global", "meta", "filter", "fileinfo", "taskgen",
};
const size_t tracker_npinned_maps = sizeof(tracker_pinned_maps) / sizeof(tracker_pinned_maps[0]);

bool tracker_pin_name_ours(const char *name)
{
	if (!strncmp(name, "link_", 5))
		return true;
	for (size_t i = 0; i < tracker_npinned_maps; i++)
		if (!strcmp(name, tracker_pinned_maps[i]))
			return true;
	return false;
}

bool tracker_is_loaded(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/meta", tracker_dir());
	return !access(path, F_OK);
}

int tracker_unpin_all(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && !err)
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !err)
		err = -errno;
	/* the default's parent, which load made; it stays while anything else is in it */
	if (!err && !strcmp(dir, TRACKER_DEFAULT_DIR))
		rmdir(TRACKER_DEFAULT_PARENT);
	return err;
}

void tracker_staging_dir(const char *dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s-loading-%ld", dir, (long)getpid());
}

/* DIR holds only what a load pins (or nothing) */
static bool only_our_pins(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	bool ours = d != NULL;

	while (ours && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !tracker_pin_name_ours(de->d_name))
			ours = false;
	if (d)
		closedir(d);
	return ours;
}

int tracker_remove_partial(const char *dir)
{
	const char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	char parent[PATH_MAX], path[PATH_MAX], meta[PATH_MAX + 8];
	size_t blen = strlen(base);
	struct dirent *de;
	int removed = 0;
	DIR *d;

	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else
		snprintf(parent, sizeof(parent), "%.*s", slash == dir ? 1 : (int)(slash - dir), dir);
	d = opendir(parent);
	while (d && (de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, base, blen) || strncmp(de->d_name + blen, "-loading-", 9))
			continue;
		pid = strtol(de->d_name + blen + 9, &end, 10);
		if (*end || pid <= 0 || pid == getpid() || !kill(pid, 0) || errno != ESRCH)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", parent, de->d_name) < (int)sizeof(path) &&
		    only_our_pins(path) && !tracker_unpin_all(path))
			removed++;
	}
	if (d)
		closedir(d);
	snprintf(meta, sizeof(meta), "%s/meta", dir);
	if (!access(dir, F_OK) && access(meta, F_OK) && errno == ENOENT && only_our_pins(dir) &&
	    !tracker_unpin_all(dir))
		removed++;
	return removed;
}

int tracker_unload(void)
{
	int removed = tracker_remove_partial(tracker_dir()), err;

	if (!tracker_is_loaded()) {
		if (!removed)
			return -ENOENT;
		ctl_err("tracker: removed what an interrupted load left at %s", tracker_dir());
		return 0;
	}
	err = tracker_unpin_all(tracker_dir());
	if (err)
		ctl_err("tracker: cannot remove %s: %s", tracker_dir(), strerror(-err));
	return err;
}
