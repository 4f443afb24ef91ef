// SPDX-License-Identifier: GPL-2.0
/*
 * The stagger's grammar (stagger.h): its three forms, the agent's exact
 * numbers and run's per-instance list. libc only.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stagger.h"

enum tandem_stagger_mode tandem_stagger_form(const char *s, const char **arg)
{
	*arg = s;
	if (!strcmp(s, "auto"))
		return TANDEM_STAGGER_AUTO;
	if (!strncmp(s, "progress:", 9)) {
		*arg = s + 9;
		return TANDEM_STAGGER_PROGRESS;
	}
	return TANDEM_STAGGER_SECONDS;
}

int tandem_milli_parse(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0, dec = -1;

	if (!*s)
		return -EINVAL;
	if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		return -EINVAL;	/* no leading zeros */
	for (; *s; s++) {
		if (*s == '.' && dec < 0 && digits) {
			dec = 0;
			continue;
		}
		if (*s < '0' || *s > '9' || dec == 3 || ++digits > 12)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (dec >= 0)
			dec++;
	}
	if (dec == 0)
		return -EINVAL;	/* "5." */
	for (dec = dec < 0 ? 0 : dec; dec < 3; dec++)
		v *= 10;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

void tandem_milli_str(uint64_t v, char *buf, size_t len)
{
	if (v % 1000 == 0)
		snprintf(buf, len, "%" PRIu64, v / 1000);
	else if (v % 100 == 0)
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64, v / 1000, v % 1000 / 100);
	else if (v % 10 == 0)
		snprintf(buf, len, "%" PRIu64 ".%02" PRIu64, v / 1000, v % 1000 / 10);
	else
		snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
}

int tandem_stagger_parse(const char *s, struct tandem_stagger *st)
{
	enum tandem_stagger_mode mode = tandem_stagger_form(s, &s);
	uint64_t v;
	int err;

	if (mode == TANDEM_STAGGER_AUTO) {
		*st = (struct tandem_stagger){ .mode = TANDEM_STAGGER_AUTO };
		return 0;
	}
	if (mode == TANDEM_STAGGER_PROGRESS) {
		err = tandem_milli_parse(s, 1000, &v);
		if (err || !v)
			return err ? err : -ERANGE;
		*st = (struct tandem_stagger){ .mode = TANDEM_STAGGER_PROGRESS,
					       .permille = (uint16_t)v };
		return 0;
	}
	err = tandem_milli_parse(s, (uint64_t)TANDEM_STAGGER_MAX_S * 1000, &v);
	if (err)
		return err;
	*st = (struct tandem_stagger){ .mode = TANDEM_STAGGER_SECONDS, .ms = (uint32_t)v };
	return 0;
}

const char *tandem_stagger_str(const struct tandem_stagger *st, char *buf, size_t len)
{
	char num[24];

	switch (st->mode) {
	case TANDEM_STAGGER_AUTO:
		snprintf(buf, len, "auto");
		break;
	case TANDEM_STAGGER_PROGRESS:
		tandem_milli_str(st->permille, num, sizeof(num));
		snprintf(buf, len, "progress:%s", num);
		break;
	default:
		tandem_milli_str(st->ms, buf, len);
	}
	return buf;
}

int tandem_stagger_parse_vector(const char *s, int n, double *delta)
{
	char *copy = strdup(s), *save = NULL, *tok;
	double v[TANDEM_STAGGER_MAX_VALUES];
	int k = 0, err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		char *end;

		if (k == TANDEM_STAGGER_MAX_VALUES)
			err = -E2BIG;
		else if ((v[k] = strtod(tok, &end)), end == tok || v[k] < 0 || !isfinite(v[k]))
			err = -EINVAL;
		else if (*end && strcmp(end, "s"))
			err = -EINVAL;
		k++;
	}
	free(copy);
	if (err)
		return err;
	if (k == 1) {			/* uniform: instance i at i * v */
		for (int i = 0; i < n; i++)
			delta[i] = i * v[0];
	} else if (k == n - 1) {	/* instance 0 at 0, the others as listed */
		delta[0] = 0;
		memcpy(delta + 1, v, k * sizeof(double));
	} else if (k == n) {
		memcpy(delta, v, k * sizeof(double));
	} else {
		return -EINVAL;
	}
	return 0;
}

/* run's F: a finite decimal (strtod), nothing after it */
static int run_fraction(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || errno == ERANGE)
		return -EINVAL;
	*out = v;
	return 0;
}

int tandem_stagger_parse_run(const char *s, int n, enum tandem_stagger_mode *mode,
			     double *fraction, double *delta, char *err, size_t errlen)
{
	const char *arg;

	*mode = tandem_stagger_form(s, &arg);
	if (*mode == TANDEM_STAGGER_AUTO)
		return 0;
	if (*mode == TANDEM_STAGGER_PROGRESS) {
		if (run_fraction(arg, fraction) || !(*fraction > 0) || *fraction > 1)
			return snprintf(err, errlen, "progress:F needs 0 < F <= 1"), -EINVAL;
		return 0;
	}
	if (tandem_stagger_parse_vector(s, n, delta))
		return snprintf(err, errlen, "--stagger: give SECONDS, N-1 or N comma-separated "
				"seconds, auto or progress:F"), -EINVAL;
	return 0;
}
