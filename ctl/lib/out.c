// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "lib/out.h"

/* the CLI's printer: one per process, like stdout itself */
static struct out_printer cur;

void out_init(FILE *f, bool json, bool pretty)
{
	cur.f = f;
	cur.json = json;
	jw_init(&cur.jw, f, pretty);
}

static FILE *out_file(void)
{
	if (!cur.f)
		out_init(stdout, false, false);
	return cur.f;
}

/* the JSON writer, for a value about to be printed */
static struct jw *jw(void)
{
	out_file();
	return &cur.jw;
}

void out_redirect(struct out_printer *saved, FILE *f, bool json, bool pretty)
{
	*saved = cur;
	cur.f = f;
	cur.json = json;
	jw_init(&cur.jw, f, pretty);
}

void out_restore(const struct out_printer *saved)
{
	cur = *saved;
}

bool out_is_json(void)
{
	return cur.json;
}

void out_obj_open(const char *key)
{
	if (cur.json)
		jw_obj_open(jw(), key);
}

void out_obj_close(void)
{
	if (cur.json)
		jw_obj_close(&cur.jw);
}

void out_arr_open(const char *key)
{
	if (cur.json)
		jw_arr_open(jw(), key);
}

void out_arr_close(void)
{
	if (cur.json)
		jw_arr_close(&cur.jw);
}

void out_str(const char *key, const char *fmt, const char *v)
{
	if (cur.json)
		jw_str(jw(), key, v);
	else if (fmt)
		fprintf(out_file(), fmt, v ? v : "-");
}

void out_u64(const char *key, const char *fmt, uint64_t v)
{
	if (cur.json)
		jw_u64(jw(), key, v);
	else if (fmt)
		fprintf(out_file(), fmt, (unsigned long long)v);
}

void out_s64(const char *key, const char *fmt, int64_t v)
{
	if (cur.json)
		jw_s64(jw(), key, v);
	else if (fmt)
		fprintf(out_file(), fmt, (long long)v);
}

void out_double(const char *key, const char *fmt, double v)
{
	if (cur.json)
		jw_double(jw(), key, v);
	else if (fmt)
		fprintf(out_file(), fmt, v);
}

void out_bool(const char *key, const char *fmt, bool v)
{
	if (cur.json)
		jw_bool(jw(), key, v);
	else if (fmt)
		fprintf(out_file(), fmt, v ? "yes" : "no");
}

void out_null(const char *key, const char *fmt)
{
	if (cur.json)
		jw_null(jw(), key);
	else if (fmt)
		fputs(fmt, out_file());
}

void out_text(const char *fmt, ...)
{
	va_list ap;

	if (cur.json)
		return;
	va_start(ap, fmt);
	vfprintf(out_file(), fmt, ap);
	va_end(ap);
}

int out_finish(void)
{
	if (!cur.f)
		return 0;
	if (cur.json)
		return jw_finish(&cur.jw);
	fflush(cur.f);
	return ferror(cur.f) ? -EIO : 0;
}
