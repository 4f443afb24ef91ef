/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON reader (a tree of nodes) and a writer for files (profiles,
 * run reports). The CLI's own output goes through out.h; this is for
 * documents tandemctl stores and reads back.
 */
#ifndef TANDEM_CTL_JSON_H
#define TANDEM_CTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum tjson_type {
	TJSON_NULL,
	TJSON_BOOL,
	TJSON_NUM,
	TJSON_STR,
	TJSON_ARR,
	TJSON_OBJ,
};

struct tjson {
	enum tjson_type type;
	char *key;		/* member name inside an object, else NULL */
	double num;
	bool b;
	char *str;
	struct tjson *child;	/* first element or member */
	struct tjson *next;	/* next sibling */
	size_t len;		/* number of children */
};

/*
 * Parse a whole document; trailing garbage is an error. On error returns
 * -EINVAL and writes "line L col C: what" into err.
 */
int tjson_parse(const char *text, struct tjson **out, char *err, size_t errlen);
int tjson_load_file(const char *path, struct tjson **out, char *err, size_t errlen);
void tjson_free(struct tjson *v);

/* Lookups return NULL when missing or v is not an object/array. */
const struct tjson *tjson_get(const struct tjson *obj, const char *key);
const struct tjson *tjson_at(const struct tjson *arr, size_t idx);
/* 0, -ENOENT when missing or null, -EINVAL when of another type */
int tjson_get_num(const struct tjson *obj, const char *key, double *out);
int tjson_get_str(const struct tjson *obj, const char *key, const char **out);

/* Writer: comma and indentation bookkeeping for a FILE. */
#define TJW_MAX_DEPTH 32
struct tjw {
	FILE *f;
	int depth;
	bool first[TJW_MAX_DEPTH];
};

void tjw_init(struct tjw *w, FILE *f);
void tjw_obj_open(struct tjw *w, const char *key);
void tjw_obj_close(struct tjw *w);
void tjw_arr_open(struct tjw *w, const char *key);
void tjw_arr_close(struct tjw *w);
void tjw_str(struct tjw *w, const char *key, const char *v);
void tjw_num(struct tjw *w, const char *key, double v);
void tjw_u64(struct tjw *w, const char *key, uint64_t v);
void tjw_s64(struct tjw *w, const char *key, int64_t v);
void tjw_bool(struct tjw *w, const char *key, bool v);
void tjw_null(struct tjw *w, const char *key);
/* final newline; returns -EIO when the stream saw an error */
int tjw_finish(struct tjw *w);

#endif
