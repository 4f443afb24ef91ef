// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "lib/out.h"

#define OUT_MAX_DEPTH 32

static FILE *out_f;
static bool out_json, out_pretty;
static int depth;
static bool first[OUT_MAX_DEPTH];	/* no element yet at this depth */
static bool started;

void out_init(FILE *f, bool json, bool pretty)
{
	out_f = f;
	out_json = json;
	out_pretty = pretty;
	depth = 0;
	first[0] = true;
	started = false;
}

bool out_is_json(void)
{
	return out_json;
}

static void json_escape(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out_f);
	for (; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out_f); break;
		case '\\': fputs("\\\\", out_f); break;
		case '\n': fputs("\\n", out_f); break;
		case '\t': fputs("\\t", out_f); break;
		case '\r': fputs("\\r", out_f); break;
		default:
			if (*p < 0x20)
				fprintf(out_f, "\\u%04x", *p);
			else
				fputc(*p, out_f);
		}
	}
	fputc('"', out_f);
}

static void indent(void)
{
	if (!out_pretty)
		return;
	fputc('\n', out_f);
	for (int i = 0; i < depth; i++)
		fputs("  ", out_f);
}

/* separator and key before a JSON value */
static void json_key(const char *key)
{
	if (!out_f)
		out_init(stdout, false, false);
	if (!first[depth])
		fputc(',', out_f);
	first[depth] = false;
	if (depth > 0)
		indent();
	if (key) {
		json_escape(key);
		fputs(out_pretty ? ": " : ":", out_f);
	}
	started = true;
}

static void open_any(const char *key, char c)
{
	if (!out_json)
		return;
	json_key(key);
	fputc(c, out_f);
	if (depth + 1 < OUT_MAX_DEPTH)
		depth++;
	first[depth] = true;
}

static void close_any(char c)
{
	if (!out_json)
		return;
	bool empty = first[depth];

	if (depth > 0)
		depth--;
	if (!empty)
		indent();
	fputc(c, out_f);
}

void out_obj_open(const char *key) { open_any(key, '{'); }
void out_obj_close(void) { close_any('}'); }
void out_arr_open(const char *key) { open_any(key, '['); }
void out_arr_close(void) { close_any(']'); }

void out_str(const char *key, const char *fmt, const char *v)
{
	if (out_json) {
		json_key(key);
		if (v)
			json_escape(v);
		else
			fputs("null", out_f);
	} else if (fmt) {
		fprintf(out_f ? out_f : stdout, fmt, v ? v : "-");
	}
}

void out_u64(const char *key, const char *fmt, uint64_t v)
{
	if (out_json) {
		json_key(key);
		fprintf(out_f, "%llu", (unsigned long long)v);
	} else if (fmt) {
		fprintf(out_f ? out_f : stdout, fmt, (unsigned long long)v);
	}
}

void out_s64(const char *key, const char *fmt, int64_t v)
{
	if (out_json) {
		json_key(key);
		fprintf(out_f, "%lld", (long long)v);
	} else if (fmt) {
		fprintf(out_f ? out_f : stdout, fmt, (long long)v);
	}
}

void out_double(const char *key, const char *fmt, double v)
{
	if (out_json) {
		json_key(key);
		if (isfinite(v))
			fprintf(out_f, "%.17g", v);
		else
			fputs("null", out_f);
	} else if (fmt) {
		fprintf(out_f ? out_f : stdout, fmt, v);
	}
}

void out_bool(const char *key, const char *fmt, bool v)
{
	if (out_json) {
		json_key(key);
		fputs(v ? "true" : "false", out_f);
	} else if (fmt) {
		fprintf(out_f ? out_f : stdout, fmt, v ? "yes" : "no");
	}
}

void out_null(const char *key, const char *fmt)
{
	if (out_json) {
		json_key(key);
		fputs("null", out_f);
	} else if (fmt) {
		fputs(fmt, out_f ? out_f : stdout);
	}
}

void out_text(const char *fmt, ...)
{
	va_list ap;

	if (out_json)
		return;
	va_start(ap, fmt);
	vfprintf(out_f ? out_f : stdout, fmt, ap);
	va_end(ap);
}

void out_finish(void)
{
	if (out_json && started && depth == 0) {
		fputc('\n', out_f);
		started = false;
	}
	if (out_f)
		fflush(out_f);
}
