/* SPDX-License-Identifier: GPL-2.0 */
/* Sizes, rates and durations on the command line and in output. */
#ifndef TANDEM_CTL_UNITS_H
#define TANDEM_CTL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * "4096", "64K", "1.5M", "2G", "1T" (binary multiples; a trailing "B"/"iB"
 * is accepted): bytes as a double, >= 0. 0 or -EINVAL.
 */
int units_parse_size(const char *s, double *out);
/* as above, but a whole number of bytes */
int units_parse_bytes(const char *s, uint64_t *out);
/*
 * A rate in bytes/s: a size as above with an optional "/s" ("50M", "50MiB/s",
 * "512K/s"; a bare number is bytes/s). The one rate convention of the CLI:
 * Documentation/tandemctl.md, "Units". 0 or -EINVAL.
 */
int units_parse_rate(const char *s, double *out);
/* "1.5", "1.5s", "250ms", "40us", "2m": seconds, >= 0. 0 or -EINVAL. */
int units_parse_duration(const char *s, double *out);
/* "12.3 MiB" into buf; returns buf */
const char *units_fmt_size(double bytes, char *buf, size_t len);
/* "12.3 MiB/s" into buf; returns buf */
const char *units_fmt_rate(double bps, char *buf, size_t len);

#endif
