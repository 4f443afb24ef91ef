// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/units.h"

static int parse_scaled(const char *s, const char *const *suffix,
			const double *scale, size_t n, double *out)
{
	char *end;
	double v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(end, suffix[i])) {
			*out = v * scale[i];
			return isfinite(*out) ? 0 : -EINVAL;
		}
	}
	return -EINVAL;
}

int units_parse_size(const char *s, double *out)
{
	static const char *const suffix[] = {
		"", "B", "K", "KB", "KiB", "M", "MB", "MiB",
		"G", "GB", "GiB", "T", "TB", "TiB",
	};
	static const double K = 1024.0, M = K * K, G = M * K, T = G * K;
	static const double scale[] = {
		1, 1, K, K, K, M, M, M, G, G, G, T, T, T,
	};

	return parse_scaled(s, suffix, scale, sizeof(scale) / sizeof(scale[0]), out);
}

int units_parse_bytes(const char *s, uint64_t *out)
{
	double v;
	int err = units_parse_size(s, &v);

	if (err)
		return err;
	if (v != floor(v) || v > 9.0e18)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

int units_parse_rate(const char *s, double *out)
{
	size_t n = s ? strlen(s) : 0;
	char buf[64];

	if (n >= 2 && !strcmp(s + n - 2, "/s")) {
		if (n - 2 >= sizeof(buf) || n == 2)
			return -EINVAL;
		memcpy(buf, s, n - 2);
		buf[n - 2] = '\0';
		return units_parse_size(buf, out);
	}
	return units_parse_size(s, out);
}

int units_parse_duration(const char *s, double *out)
{
	static const char *const suffix[] = { "", "s", "ms", "us", "m", "min" };
	static const double scale[] = { 1, 1, 1e-3, 1e-6, 60, 60 };

	return parse_scaled(s, suffix, scale, sizeof(scale) / sizeof(scale[0]), out);
}

const char *units_fmt_size(double bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;

	while (fabs(bytes) >= 1024.0 && i < 4) {
		bytes /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%.0f B", bytes);
	else
		snprintf(buf, len, "%.1f %s", bytes, unit[i]);
	return buf;
}

const char *units_fmt_rate(double bps, char *buf, size_t len)
{
	size_t n;

	units_fmt_size(bps, buf, len);
	n = strlen(buf);
	snprintf(buf + n, len > n ? len - n : 0, "/s");
	return buf;
}
