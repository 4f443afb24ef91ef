/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One print path for text and JSON (after iproute2's json_print over
 * json_writer): every value is emitted once with its JSON key and its text
 * format. In JSON mode the key is used and the format ignored (the JSON goes
 * through lib/json.h's writer); in text mode the format is printed (a NULL
 * format prints nothing) and the key ignored.
 *
 * The printer is the CLI's, one per process; out_redirect() points it at
 * another stream for one document (run --report) and gives the old one back.
 */
#ifndef TANDEM_CTL_OUT_H
#define TANDEM_CTL_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/json.h"

struct out_printer {
	FILE *f;
	bool json;
	struct jw jw;
};

void out_init(FILE *f, bool json, bool pretty);
/* print to f from now on; *saved gets the printer to give back to out_restore() */
void out_redirect(struct out_printer *saved, FILE *f, bool json, bool pretty);
void out_restore(const struct out_printer *saved);
/* key is NULL inside arrays and for the top-level value */
void out_obj_open(const char *key);
void out_obj_close(void);
void out_arr_open(const char *key);
void out_arr_close(void);
void out_str(const char *key, const char *fmt, const char *v);
void out_u64(const char *key, const char *fmt, uint64_t v);
void out_s64(const char *key, const char *fmt, int64_t v);
void out_double(const char *key, const char *fmt, double v);
void out_bool(const char *key, const char *fmt, bool v);
void out_null(const char *key, const char *fmt);
/* text only: printf-like, nothing in JSON mode */
void out_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* close the document (JSON: final newline); safe to call twice; -EIO on a write error */
int out_finish(void);
bool out_is_json(void);

#endif
