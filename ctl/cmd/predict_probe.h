/* SPDX-License-Identifier: GPL-2.0 */
/* The device probe on the CLI: shared by predict probe, predict and calibrate. */
#ifndef TANDEM_CTL_PREDICT_PROBE_H
#define TANDEM_CTL_PREDICT_PROBE_H

#include <stdbool.h>

#include "tandem_predict.h"

/* One probe as an object under key; text: its identity and a line per
 * kind indented by indent, or (indent NULL) its identity alone, no newline. */
void print_probe(const char *key, const struct tp_probe *p, const char *indent);
/* The mapping of a prediction: which probes, the ratios and the factor. */
void print_probe_mapping(const struct tp_model *m, const struct tp_probe *host, bool cached,
			 const struct tp_prediction *pr, const char *why_not);

#endif
