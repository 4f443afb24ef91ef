/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TANDEM_CTL_UTIL_H
#define TANDEM_CTL_UTIL_H

#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

/* Strict number parsing: the whole string, in range; 0 or -EINVAL/-ERANGE. */
int parse_u64(const char *s, uint64_t max, uint64_t *out);
int parse_s64(const char *s, int64_t min, int64_t max, int64_t *out);
int parse_u32(const char *s, uint32_t *out);
int parse_double(const char *s, double *out);
/* monotonic clock in seconds */
double now_s(void);
/* mkdir -p dir, each directory made with mode 0700; 0 or -errno */
int mkdir_p(const char *dir);
/*
 * Makes f, written at tmp, durable and puts it in place of path: fflush,
 * fsync, fclose, rename; on failure tmp is removed. f is closed either way;
 * 0 or -errno.
 */
int file_commit(FILE *f, const char *tmp, const char *path);
/* fsync a directory, so that the entries made or renamed in it survive a crash; 0 or -errno */
int fsync_dir(const char *dir);
/* The median of v[0..n) (sorts v); 0 when n is 0. */
double median_d(double *v, int n);

/* "1.5 GiB"-style size into buf; returns buf */
char *fmt_bytes(char *buf, size_t len, uint64_t bytes);
#endif
