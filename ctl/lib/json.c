// SPDX-License-Identifier: GPL-2.0
/* The JSON writer, and the reader on Jansson (see json.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "lib/json.h"

/* ---- writer ---- */

void jw_init(struct jw *w, FILE *f, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->pretty = pretty;
	w->first[0] = true;
}

static void jw_escape(struct jw *w, const char *s)
{
	fputc('"', w->f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", w->f); break;
		case '\\': fputs("\\\\", w->f); break;
		case '\n': fputs("\\n", w->f); break;
		case '\t': fputs("\\t", w->f); break;
		case '\r': fputs("\\r", w->f); break;
		default:
			if (*p < 0x20)
				fprintf(w->f, "\\u%04x", *p);
			else
				fputc(*p, w->f);
		}
	}
	fputc('"', w->f);
}

static void jw_indent(struct jw *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

/* separator and key before a value */
static void jw_key(struct jw *w, const char *key)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	if (w->depth > 0)
		jw_indent(w);
	if (key) {
		jw_escape(w, key);
		fputs(w->pretty ? ": " : ":", w->f);
	}
	w->started = true;
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_key(w, key);
	fputc(c, w->f);
	if (w->depth + 1 < JW_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

static void jw_close(struct jw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty)
		jw_indent(w);
	fputc(c, w->f);
}

void jw_obj_open(struct jw *w, const char *key) { jw_open(w, key, '{'); }
void jw_obj_close(struct jw *w) { jw_close(w, '}'); }
void jw_arr_open(struct jw *w, const char *key) { jw_open(w, key, '['); }
void jw_arr_close(struct jw *w) { jw_close(w, ']'); }

void jw_str(struct jw *w, const char *key, const char *v)
{
	jw_key(w, key);
	if (v)
		jw_escape(w, v);
	else
		fputs("null", w->f);
}

void jw_double(struct jw *w, const char *key, double v)
{
	jw_key(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.17g", v);
	else
		fputs("null", w->f);
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_s64(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	fprintf(w->f, "%lld", (long long)v);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	jw_key(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *key)
{
	jw_key(w, key);
	fputs("null", w->f);
}

int jw_finish(struct jw *w)
{
	if (w->started && w->depth == 0) {
		fputc('\n', w->f);
		w->started = false;
	}
	fflush(w->f);
	return ferror(w->f) ? -EIO : 0;
}

/* ---- reader ---- */

/*
 * A document may be any value (RFC 8259); a duplicate key is an error; every
 * number is a double, as the documents mean them (an integer beyond 2^63 too)
 */
#define TJSON_FLAGS (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL)

static int tjson_err(const json_error_t *e, char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "line %d col %d: %s", e->line, e->column, e->text);
	return -EINVAL;
}

int tjson_parse(const char *text, json_t **out, char *err, size_t errlen)
{
	json_error_t e;

	*out = json_loads(text, TJSON_FLAGS, &e);
	return *out ? 0 : tjson_err(&e, err, errlen);
}

int tjson_load_file(const char *path, json_t **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	json_error_t e;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		return ret;
	}
	*out = json_loadf(f, TJSON_FLAGS, &e);
	ret = *out ? 0 : ferror(f) ? -EIO : tjson_err(&e, err, errlen);
	if (ret == -EIO)
		snprintf(err, errlen, "read error");
	fclose(f);
	return ret;
}

int tjson_get_num(const json_t *obj, const char *key, double *out)
{
	const json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return -ENOENT;
	if (!json_is_number(v))
		return -EINVAL;
	*out = json_number_value(v);
	return 0;
}

int tjson_get_str(const json_t *obj, const char *key, const char **out)
{
	const json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return -ENOENT;
	if (!json_is_string(v))
		return -EINVAL;
	*out = json_string_value(v);
	return 0;
}
