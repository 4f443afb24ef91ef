// SPDX-License-Identifier: GPL-2.0
/* Device features of the CPU or of the first GPU, and whether a GPU is usable. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ghn.h"

/*
 * Where the CPU's model name and clock are read: /proc/cpuinfo, or the file
 * TANDEM_CPUINFO names (in the same format). The suite uses it to stand in
 * another host's CPU; a user can use it to predict for a host like the one
 * the file was copied from.
 */
static const char *cpuinfo_path(void)
{
	const char *p = getenv("TANDEM_CPUINFO");

	return p && *p ? p : "/proc/cpuinfo";
}

/* Cores, GHz from /proc/cpuinfo; memory bandwidth is not measured (0). */
static int cpu_device(struct tp_device *dev)
{
	const char *path = cpuinfo_path();
	FILE *f = fopen(path, "r");
	char line[512];
	double mhz = 0;

	memset(dev, 0, sizeof(*dev));
	/* a substitute that cannot be read is the user's error, not "cpu" */
	if (!f && strcmp(path, "/proc/cpuinfo"))
		return tp_fail(-errno, "TANDEM_CPUINFO: cannot read %s: %s", path,
			       strerror(errno));
	dev->feat[0] = (double)sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(dev->name, sizeof(dev->name), "cpu");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (!strncmp(line, "model name", 10) && !strcmp(dev->name, "cpu")) {
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(dev->name, sizeof(dev->name), "%.95s", colon + 2);
		} else if (!strncmp(line, "cpu MHz", 7) && !mhz) {
			mhz = atof(colon + 1);
		}
	}
	if (f)
		fclose(f);
	dev->feat[1] = mhz / 1000.0;
	return 0;
}

int tp_device_query(enum tp_backend b, struct tp_device *dev)
{
	tp_clear_error();
	if (b == TP_BACKEND_AUTO)
		b = tp_cuda_available() ? TP_BACKEND_CUDA : TP_BACKEND_CPU;
	if (b == TP_BACKEND_CUDA) {
		if (!tp_cuda_available())
			return tp_fail(-ENODEV, "no usable GPU");
		return tp_cuda_device(dev);
	}
	return cpu_device(dev);
}

const char *tp_backend_name(enum tp_backend b)
{
	return b == TP_BACKEND_CUDA ? "cuda" : b == TP_BACKEND_CPU ? "cpu" : "auto";
}

bool tp_cuda_available(void)
{
	static int probed = -1;

	if (probed < 0)
		probed = tp_cuda_probe() > 0;
	return probed;
}
