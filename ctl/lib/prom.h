/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A writer of Prometheus' text exposition format (version 0.0.4) for
 * node_exporter's textfile collector: the file is written under a temporary
 * name in the collector's folder and renamed over DIR/NAME.prom when
 * complete, so a scrape never sees half a file.
 *
 *   struct tandem_prom p;
 *   tandem_prom_open(&p, "/var/lib/prometheus/node-exporter", "tandem_agent.prom");
 *   tandem_prom_family(&p, "tandem_agent_releases_total", TANDEM_PROM_COUNTER, "...");
 *   tandem_prom_sample(&p, (struct tandem_prom_label[]){{"reason", "stagger"}}, 1, 3);
 *   tandem_prom_commit(&p);
 *
 * Names are checked against the conventions: the tandem_ prefix, lower case,
 * counters end in _total and gauges do not, each family once per file, its
 * HELP and TYPE first; label names are [a-zA-Z_][a-zA-Z0-9_]* without the
 * reserved "__" prefix; label values and HELP are escaped (\\, \", \n) and
 * bytes that are not UTF-8 become U+FFFD. No timestamps: the textfile
 * collector refuses them. The first error sticks: later calls return it and
 * commit() removes the temporary file.
 */
#ifndef TANDEM_PROM_H
#define TANDEM_PROM_H

#include <stddef.h>
#include <stdio.h>

enum tandem_prom_type {
	TANDEM_PROM_COUNTER,
	TANDEM_PROM_GAUGE,
};

struct tandem_prom_label {
	const char *name;
	const char *value;
};

#define TANDEM_PROM_NAME_MAX 128
#define TANDEM_PROM_FAMILIES_MAX 128

struct tandem_prom {
	FILE *f;
	char *path, *tmp;
	char family[TANDEM_PROM_NAME_MAX];	/* the family samples go to */
	enum tandem_prom_type type;
	char *seen[TANDEM_PROM_FAMILIES_MAX];	/* families written so far */
	size_t nseen;
	int err;
	int stream;				/* open_stream(): no file of its own */
};

/* name: the final file name in dir, ending in ".prom" */
int tandem_prom_open(struct tandem_prom *p, const char *dir, const char *name);
int tandem_prom_family(struct tandem_prom *p, const char *name, enum tandem_prom_type type,
		       const char *help);
/* the same checks, written to f (stdout): commit() flushes it, nothing is renamed */
int tandem_prom_open_stream(struct tandem_prom *p, FILE *f);
/* a sample of the current family; counters take finite values >= 0 */
int tandem_prom_sample(struct tandem_prom *p, const struct tandem_prom_label *labels,
		       size_t nlabels, double value);
/* flush, fsync, mode 0644, rename into place; frees p's memory either way */
int tandem_prom_commit(struct tandem_prom *p);
/* drop the temporary file */
void tandem_prom_abort(struct tandem_prom *p);

#endif
