// SPDX-License-Identifier: GPL-2.0
/*
 * Where the tracker is pinned, whether it is loaded, and unloading it:
 * everything that works on the pin directory as a whole (tracker.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracker/internal.h"
#include "tracker/tracker.h"

const char *tracker_dir(void)
{
	const char *d = getenv("TANDEM_TRACKER_DIR");

	return d && *d ? d : TRACKER_DEFAULT_DIR;
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

int tracker_unload(void)
{
	int err;

	if (!tracker_is_loaded())
		return -ENOENT;
	err = tracker_unpin_all(tracker_dir());
	if (err)
		ctl_err("tracker: cannot remove %s: %s", tracker_dir(), strerror(-err));
	return err;
}
