// SPDX-License-Identifier: GPL-2.0
/*
 * The device probe's record: its text form, the per-host cache and the
 * ratios between two hosts' probes (Documentation/predictor.md, "Device
 * probe"). The cache is one file, keyed by the CPU model string, the
 * online CPU count and the probe's version: a file with another key is
 * measured again and replaced.
 *
 *   tandem-probe 1
 *   cpu AMD EPYC
 *   ncpu 2
 *   when 1796554800
 *   seconds 5.21
 *   conv 12.3 0.012 GFLOP/s          rate, spread (median / best - 1), unit
 *   ...                              one line per kind
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static const char *const kind_names[TP_PROBE_KINDS] = { "conv", "dwconv", "gemm", "mem", "op" };
static const char *const kind_units[TP_PROBE_KINDS] = {
	"GFLOP/s", "GFLOP/s", "GFLOP/s", "GB/s", "Mop/s",
};

const char *tp_probe_kind_name(int kind)
{
	return kind >= 0 && kind < TP_PROBE_KINDS ? kind_names[kind] : "?";
}

const char *tp_probe_kind_unit(int kind)
{
	return kind >= 0 && kind < TP_PROBE_KINDS ? kind_units[kind] : "?";
}

int tp_probe_save(const struct tp_probe *p, const char *path)
{
	char tmp[4200];
	FILE *f;
	int err = 0;

	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return tp_fail(-errno, "%s: %s", tmp, strerror(errno));
	fprintf(f, "tandem-probe %u\ncpu %s\nncpu %u\nwhen %lld\nseconds %.3f\n", p->version,
		p->cpu, p->ncpu, (long long)p->when, p->seconds);
	for (int k = 0; k < TP_PROBE_KINDS; k++)
		fprintf(f, "%s %.6g %.4f %s\n", kind_names[k], p->rate[k], p->spread[k],
			kind_units[k]);
	if (ferror(f))
		err = tp_fail(-EIO, "%s: write failed", tmp);
	if (fclose(f) && !err)
		err = tp_fail(-errno, "%s: %s", tmp, strerror(errno));
	if (!err && rename(tmp, path))
		err = tp_fail(-errno, "%s: %s", path, strerror(errno));
	if (err)
		unlink(tmp);
	return err;
}

/* One "key value..." line into p; bit (1 << field) of *seen set. */
static int parse_line(char *line, struct tp_probe *p, unsigned *seen)
{
	char *val = strchr(line, ' ');
	long long n;

	line[strcspn(line, "\n")] = '\0';
	if (!val)
		return *line ? -1 : 0;
	*val++ = '\0';
	if (!strcmp(line, "tandem-probe") && sscanf(val, "%u", &p->version) == 1)
		*seen |= 1u << 0;
	else if (!strcmp(line, "cpu") && snprintf(p->cpu, sizeof(p->cpu), "%s", val) >= 0)
		*seen |= 1u << 1;
	else if (!strcmp(line, "ncpu") && sscanf(val, "%u", &p->ncpu) == 1)
		*seen |= 1u << 2;
	else if (!strcmp(line, "when") && sscanf(val, "%lld", &n) == 1 && (p->when = n) >= 0)
		*seen |= 1u << 3;
	else if (!strcmp(line, "seconds") && sscanf(val, "%lf", &p->seconds) == 1)
		*seen |= 1u << 4;
	for (int k = 0; k < TP_PROBE_KINDS; k++)
		if (!strcmp(line, kind_names[k]) &&
		    sscanf(val, "%lf %lf", &p->rate[k], &p->spread[k]) == 2 &&
		    isfinite(p->rate[k]) && p->rate[k] > 0 && isfinite(p->spread[k]))
			*seen |= 1u << (5 + k);
	return 0;
}

int tp_probe_load(const char *path, struct tp_probe *p)
{
	unsigned seen = 0, all = (1u << (5 + TP_PROBE_KINDS)) - 1;
	char line[256];
	FILE *f;
	int lineno = 0;

	tp_clear_error();
	memset(p, 0, sizeof(*p));
	f = fopen(path, "r");
	if (!f)
		return tp_fail(-errno, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (parse_line(line, p, &seen)) {
			fclose(f);
			return tp_fail(-EBADMSG, "%s:%d: not a probe line", path, lineno);
		}
	}
	fclose(f);
	if (seen != all)
		return tp_fail(-EBADMSG, "%s: not a complete device probe (fields 0x%x of 0x%x)",
			       path, seen, all);
	return 0;
}

/* mkdir -p of the directory part of path (two levels are enough here) */
static void make_dirs(const char *path)
{
	char dir[4096], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (!mkdir(dir, 0755) || errno != ENOENT)
		return;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	mkdir(dir, 0755);
	slash[0] = '/';
	mkdir(dir, 0755);
}

int tp_probe_cache_path(char *buf, size_t len)
{
	const char *dir = getenv("TANDEM_PROBE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (dir && *dir)
		n = snprintf(buf, len, "%s/probe-v%u.txt", dir, TP_PROBE_VERSION);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/var/lib/tandem/probe-v%u.txt", TP_PROBE_VERSION);
	else if (xdg && *xdg == '/')
		n = snprintf(buf, len, "%s/tandem/probe-v%u.txt", xdg, TP_PROBE_VERSION);
	else if (home && *home == '/')
		n = snprintf(buf, len, "%s/.cache/tandem/probe-v%u.txt", home, TP_PROBE_VERSION);
	else
		return tp_fail(-ENOENT, "no cache directory: HOME and XDG_CACHE_HOME are unset");
	if (n < 0 || (size_t)n >= len)
		return tp_fail(-ENAMETOOLONG, "the probe's cache path is too long");
	return 0;
}

int tp_probe_host(bool rerun, struct tp_probe *p, bool *cached)
{
	char path[4096], cpu[96];
	uint32_t ncpu;
	int err;

	tp_clear_error();
	*cached = false;
	tp_probe_host_key(cpu, &ncpu);
	err = tp_probe_cache_path(path, sizeof(path));
	if (!err && !rerun && !tp_probe_load(path, p) && p->version == TP_PROBE_VERSION &&
	    p->ncpu == ncpu && !strcmp(p->cpu, cpu)) {
		*cached = true;
		return 0;
	}
	err = tp_probe_run(p);
	if (err)
		return err;
	if (!tp_probe_cache_path(path, sizeof(path))) {
		make_dirs(path);
		tp_probe_save(p, path);	/* a cache that cannot be written: measured next time */
	}
	tp_clear_error();
	return 0;
}

void tp_probe_ratios(const struct tp_probe *from, const struct tp_probe *to,
		     double ratio[TP_PROBE_KINDS])
{
	for (int k = 0; k < TP_PROBE_KINDS; k++)
		ratio[k] = to->rate[k] > 0 && from->rate[k] > 0 ? from->rate[k] / to->rate[k] : 1.0;
}
