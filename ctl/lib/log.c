// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>

#include "lib/log.h"

/* where lines go: process-wide configuration, set once by the program */
static ctl_log_fn log_fn;
static void *log_arg;

void ctl_log_set(ctl_log_fn fn, void *arg)
{
	log_fn = fn;
	log_arg = arg;
}

static void emit(int prefixed, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (log_fn)
		log_fn(log_arg, line, prefixed);
	else
		fprintf(stderr, "%s%s\n", prefixed ? "tandemctl: " : "", line);
}

void ctl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(1, fmt, ap);
	va_end(ap);
}

void ctl_err_raw(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(0, fmt, ap);
	va_end(ap);
}
