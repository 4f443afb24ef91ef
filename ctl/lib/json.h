/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON for tandemctl: the one writer (struct jw, after iproute2's
 * lib/json_writer.c), under the text/JSON print path (lib/out.h) and used
 * directly for stored documents (profiles); and the reader, Jansson's
 * (Debian's libjansson: RFC 8259 with surrogate pairs and UTF-8 checks,
 * errors with line and column), with lookups that say what was wrong.
 */
#ifndef TANDEM_CTL_JSON_H
#define TANDEM_CTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* ---- writer ---- */

#define JW_MAX_DEPTH 32

struct jw {
	FILE *f;
	bool pretty;		/* newlines and two-space indents, "key": value */
	bool started;		/* a top-level value was begun */
	int depth;
	bool first[JW_MAX_DEPTH];	/* no element yet at this depth */
};

void jw_init(struct jw *w, FILE *f, bool pretty);
/* key is NULL inside arrays and for the top-level value */
void jw_obj_open(struct jw *w, const char *key);
void jw_obj_close(struct jw *w);
void jw_arr_open(struct jw *w, const char *key);
void jw_arr_close(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *v);	/* NULL: null */
void jw_double(struct jw *w, const char *key, double v);	/* not finite: null */
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_s64(struct jw *w, const char *key, int64_t v);
void jw_bool(struct jw *w, const char *key, bool v);
void jw_null(struct jw *w, const char *key);
/* end the document (newline) once it is complete; -EIO when the stream failed */
int jw_finish(struct jw *w);

/* ---- reader ---- */

/*
 * A whole document (trailing text is an error). On error -EINVAL (-errno
 * when the file cannot be read) and "line L col C: what" in err.
 */
int tjson_parse(const char *text, json_t **out, char *err, size_t errlen);
int tjson_load_file(const char *path, json_t **out, char *err, size_t errlen);
/* 0; -ENOENT when missing or null; -EINVAL when of another type */
int tjson_get_num(const json_t *obj, const char *key, double *out);
int tjson_get_str(const json_t *obj, const char *key, const char **out);

#endif
