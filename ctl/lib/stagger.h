/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stagger: when each instance of a group starts. One grammar of three
 * forms, one enum, for `tandemctl run --stagger`, the agent (REGISTER's
 * stagger=, --auto-stagger) and the Slurm plugin (--tandem-stagger):
 *
 *   auto        the model decides (run: the planned vector; agent: its policy)
 *   progress:F  the next starts when the running ones have loaded F, 0 < F <= 1
 *   SECONDS     a time between starts
 *
 * The numbers are written as each side has always taken them: on the
 * agent's wire exactly to the millisecond (tandem_stagger_parse: one value,
 * up to 3 decimals, no sign or exponent, <= 86400 s); in `run` as any
 * decimal (strtod), SECONDS optionally with an "s" and as a list, one per
 * instance (tandem_stagger_parse_run). libc only: the plugin links it.
 */
#ifndef TANDEM_LIB_STAGGER_H
#define TANDEM_LIB_STAGGER_H

#include <stddef.h>
#include <stdint.h>

#define TANDEM_STAGGER_MAX_S 86400	/* the agent's SECONDS, at most a day */
#define TANDEM_STAGGER_MAX_VALUES 64	/* run's list: MODEL_MAX_INST */

enum tandem_stagger_mode {
	TANDEM_STAGGER_AUTO,		/* the model decides */
	TANDEM_STAGGER_SECONDS,		/* by time: seconds between starts, or a vector */
	TANDEM_STAGGER_PROGRESS,	/* when the running ones are far enough */
};

/* the agent's form of a stagger (on the wire) */
struct tandem_stagger {
	enum tandem_stagger_mode mode;
	uint32_t ms;		/* SECONDS: 0 .. 86400000 */
	uint16_t permille;	/* PROGRESS: 1 .. 1000 */
};

/* Which form s has; *arg: what follows "progress:", or s itself for SECONDS. */
enum tandem_stagger_mode tandem_stagger_form(const char *s, const char **arg);

/* The agent's form: "auto", "SECONDS" (up to 3 decimals, <= 86400), "progress:F" */
int tandem_stagger_parse(const char *s, struct tandem_stagger *st);
/* the same text back; buf of at least 24 bytes */
const char *tandem_stagger_str(const struct tandem_stagger *st, char *buf, size_t len);

/*
 * run's form for n instances: *mode, and *fraction (PROGRESS) or delta[0..n)
 * (SECONDS: "0.5", "2,5.5", "30s"; one value v: instance k at k * v; n-1
 * values: instance 0 at 0). -EINVAL with the reason in err.
 */
int tandem_stagger_parse_run(const char *s, int n, enum tandem_stagger_mode *mode,
			     double *fraction, double *delta, char *err, size_t errlen);
/* Only the SECONDS list of run's form: 0, -EINVAL, -E2BIG or -ENOMEM. */
int tandem_stagger_parse_vector(const char *s, int n, double *delta);

/* A decimal with up to 3 decimals, in thousandths (no sign, exponent or leading 0). */
int tandem_milli_parse(const char *s, uint64_t max, uint64_t *out);
/* v thousandths as the shortest such decimal */
void tandem_milli_str(uint64_t v, char *buf, size_t len);

#endif
