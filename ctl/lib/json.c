// SPDX-License-Identifier: GPL-2.0
/*
 * Small JSON reader and file writer (RFC 8259 subset: no duplicate-key
 * checks; \u escapes outside ASCII are stored as UTF-8).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

#define TJSON_MAX_NEST 64

struct parser {
	const char *s;
	const char *p;
	char *err;
	size_t errlen;
	int nest;
};

static int perr(struct parser *ps, const char *fmt, ...)
{
	int line = 1, col = 1;
	va_list ap;
	int n;

	for (const char *q = ps->s; q < ps->p; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (!ps->err || !ps->errlen)
		return -EINVAL;
	n = snprintf(ps->err, ps->errlen, "line %d col %d: ", line, col);
	if (n >= 0 && (size_t)n < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int hex4(const char *p, unsigned int *out)
{
	unsigned int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned int cp)
{
	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xc0 | (cp >> 6);
		o[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	o[0] = 0xe0 | (cp >> 12);
	o[1] = 0x80 | ((cp >> 6) & 0x3f);
	o[2] = 0x80 | (cp & 0x3f);
	return 3;
}

static int escape_char(struct parser *ps, char **o)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *m = strchr(from, *ps->p);
	unsigned int cp;

	if (*ps->p && m) {
		*(*o)++ = to[m - from];
		ps->p++;
		return 0;
	}
	if (*ps->p != 'u' || hex4(ps->p + 1, &cp))
		return perr(ps, "bad escape in string");
	ps->p += 5;
	/* surrogate pairs are not needed by our documents: keep BMP only */
	if (cp >= 0xd800 && cp <= 0xdfff)
		return perr(ps, "surrogate \\u escapes are not supported");
	*o += put_utf8(*o, cp);
	return 0;
}

/* ps->p at the opening quote; the decoded string is never longer */
static int parse_string(struct parser *ps, char **out)
{
	const char *start = ++ps->p;
	char *buf, *o;
	int err;

	while (*ps->p && *ps->p != '"')
		ps->p += (*ps->p == '\\' && ps->p[1]) ? 2 : 1;
	if (!*ps->p)
		return perr(ps, "unterminated string");
	buf = malloc(ps->p - start + 1);
	if (!buf)
		return -ENOMEM;
	ps->p = start;
	o = buf;
	while (*ps->p != '"') {
		unsigned char c = *ps->p;

		if (c < 0x20) {
			err = perr(ps, "control character in string");
			goto free_buf;
		}
		ps->p++;
		if (c != '\\') {
			*o++ = c;
			continue;
		}
		err = escape_char(ps, &o);
		if (err)
			goto free_buf;
	}
	ps->p++;
	*o = '\0';
	*out = buf;
	return 0;
free_buf:
	free(buf);
	return err;
}

static int parse_number(struct parser *ps, double *out)
{
	const char *q = ps->p;
	char *end;

	/* JSON grammar check before strtod, which accepts more (hex, inf) */
	if (*q == '-')
		q++;
	if (*q < '0' || *q > '9')
		return perr(ps, "unexpected character '%c'", *ps->p ? *ps->p : '?');
	errno = 0;
	*out = strtod(ps->p, &end);
	for (q = ps->p; q < end; q++)
		if (!strchr("0123456789+-.eE", *q))
			return perr(ps, "bad number");
	if (errno == ERANGE && isinf(*out))
		return perr(ps, "number out of range");
	ps->p = end;
	return 0;
}

static int parse_value(struct parser *ps, struct tjson *v);

static int parse_members(struct parser *ps, struct tjson *v, bool obj)
{
	struct tjson **tail = &v->child;
	char close = obj ? '}' : ']';
	int err;

	ps->p++;
	skip_ws(ps);
	if (*ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		struct tjson *c = calloc(1, sizeof(*c));

		if (!c)
			return -ENOMEM;
		*tail = c;
		tail = &c->next;
		v->len++;
		skip_ws(ps);
		if (obj) {
			if (*ps->p != '"')
				return perr(ps, "expected member name");
			err = parse_string(ps, &c->key);
			if (err)
				return err;
			skip_ws(ps);
			if (*ps->p != ':')
				return perr(ps, "expected ':'");
			ps->p++;
		}
		err = parse_value(ps, c);
		if (err)
			return err;
		skip_ws(ps);
		if (*ps->p == close) {
			ps->p++;
			return 0;
		}
		if (*ps->p != ',')
			return perr(ps, "expected ',' or '%c'", close);
		ps->p++;
	}
}

static int parse_literal(struct parser *ps, struct tjson *v)
{
	static const struct {
		const char *word;
		enum tjson_type type;
		bool b;
	} lit[] = {
		{ "true", TJSON_BOOL, true },
		{ "false", TJSON_BOOL, false },
		{ "null", TJSON_NULL, false },
	};

	for (size_t i = 0; i < sizeof(lit) / sizeof(lit[0]); i++) {
		size_t n = strlen(lit[i].word);

		if (!strncmp(ps->p, lit[i].word, n)) {
			v->type = lit[i].type;
			v->b = lit[i].b;
			ps->p += n;
			return 0;
		}
	}
	v->type = TJSON_NUM;
	return parse_number(ps, &v->num);
}

static int parse_value(struct parser *ps, struct tjson *v)
{
	int err;

	skip_ws(ps);
	switch (*ps->p) {
	case '{':
	case '[':
		if (++ps->nest > TJSON_MAX_NEST)
			return perr(ps, "nested too deeply");
		v->type = *ps->p == '{' ? TJSON_OBJ : TJSON_ARR;
		err = parse_members(ps, v, v->type == TJSON_OBJ);
		ps->nest--;
		return err;
	case '"':
		v->type = TJSON_STR;
		return parse_string(ps, &v->str);
	case '\0':
		return perr(ps, "unexpected end of input");
	default:
		return parse_literal(ps, v);
	}
}

int tjson_parse(const char *text, struct tjson **out, char *err, size_t errlen)
{
	struct parser ps = { .s = text, .p = text, .err = err, .errlen = errlen };
	struct tjson *v;
	int ret;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	ret = parse_value(&ps, v);
	if (!ret) {
		skip_ws(&ps);
		if (*ps.p)
			ret = perr(&ps, "trailing characters after the document");
	}
	if (ret) {
		tjson_free(v);
		return ret;
	}
	*out = v;
	return 0;
}

int tjson_load_file(const char *path, struct tjson **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		return ret;
	}
	do {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap ? cap * 2 : 8192);

			if (!nb) {
				ret = -ENOMEM;
				goto free_buf;
			}
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	if (ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "read error");
		goto free_buf;
	}
	buf[len] = '\0';
	ret = tjson_parse(buf, out, err, errlen);
free_buf:
	free(buf);
	fclose(f);
	return ret;
}

void tjson_free(struct tjson *v)
{
	while (v) {
		struct tjson *next = v->next;

		tjson_free(v->child);
		free(v->key);
		free(v->str);
		free(v);
		v = next;
	}
}

const struct tjson *tjson_get(const struct tjson *obj, const char *key)
{
	if (!obj || obj->type != TJSON_OBJ)
		return NULL;
	for (const struct tjson *c = obj->child; c; c = c->next)
		if (!strcmp(c->key, key))
			return c;
	return NULL;
}

const struct tjson *tjson_at(const struct tjson *arr, size_t idx)
{
	const struct tjson *c;

	if (!arr || arr->type != TJSON_ARR)
		return NULL;
	for (c = arr->child; c && idx; c = c->next)
		idx--;
	return c;
}

int tjson_get_num(const struct tjson *obj, const char *key, double *out)
{
	const struct tjson *v = tjson_get(obj, key);

	if (!v || v->type == TJSON_NULL)
		return -ENOENT;
	if (v->type != TJSON_NUM)
		return -EINVAL;
	*out = v->num;
	return 0;
}

int tjson_get_str(const struct tjson *obj, const char *key, const char **out)
{
	const struct tjson *v = tjson_get(obj, key);

	if (!v || v->type == TJSON_NULL)
		return -ENOENT;
	if (v->type != TJSON_STR)
		return -EINVAL;
	*out = v->str;
	return 0;
}

/* ---- writer ---- */

void tjw_init(struct tjw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->first[0] = true;
}

static void tjw_escape(struct tjw *w, const char *s)
{
	fputc('"', w->f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(w->f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", w->f);
		else if (*p < 0x20)
			fprintf(w->f, "\\u%04x", *p);
		else
			fputc(*p, w->f);
	}
	fputc('"', w->f);
}

static void tjw_key(struct tjw *w, const char *key)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	if (w->depth > 0) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	if (key) {
		tjw_escape(w, key);
		fputs(": ", w->f);
	}
}

static void tjw_open(struct tjw *w, const char *key, char c)
{
	tjw_key(w, key);
	fputc(c, w->f);
	if (w->depth + 1 < TJW_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

static void tjw_close(struct tjw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	fputc(c, w->f);
}

void tjw_obj_open(struct tjw *w, const char *key) { tjw_open(w, key, '{'); }
void tjw_obj_close(struct tjw *w) { tjw_close(w, '}'); }
void tjw_arr_open(struct tjw *w, const char *key) { tjw_open(w, key, '['); }
void tjw_arr_close(struct tjw *w) { tjw_close(w, ']'); }

void tjw_str(struct tjw *w, const char *key, const char *v)
{
	tjw_key(w, key);
	if (v)
		tjw_escape(w, v);
	else
		fputs("null", w->f);
}

void tjw_num(struct tjw *w, const char *key, double v)
{
	tjw_key(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.17g", v);
	else
		fputs("null", w->f);
}

void tjw_u64(struct tjw *w, const char *key, uint64_t v)
{
	tjw_key(w, key);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

void tjw_s64(struct tjw *w, const char *key, int64_t v)
{
	tjw_key(w, key);
	fprintf(w->f, "%lld", (long long)v);
}

void tjw_bool(struct tjw *w, const char *key, bool v)
{
	tjw_key(w, key);
	fputs(v ? "true" : "false", w->f);
}

void tjw_null(struct tjw *w, const char *key)
{
	tjw_key(w, key);
	fputs("null", w->f);
}

int tjw_finish(struct tjw *w)
{
	fputc('\n', w->f);
	return ferror(w->f) ? -EIO : 0;
}
