/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TANDEM_PREDICT_RUNS_H
#define TANDEM_PREDICT_RUNS_H

#include "internal.h"

struct tp_run {
	int arch;
	double batch;
	int gpus, nodes;
	double t;		/* seconds per iteration */
};

struct tp_arch {
	char name[64];
	char path[512];		/* the ONNX file: one architecture per graph */
	struct tp_graph *g;
	int group;		/* first architecture of the same name: held out together */
	int run0, nruns;	/* range in tp_dataset.by_arch */
};

struct tp_dataset {
	struct tp_arch *archs;
	int narchs, cap_archs;
	struct tp_run *runs;
	int nruns, cap_runs;
	int *by_arch;		/* run indices grouped by architecture */
	char machine[128];	/* from the "# machine:" comment */
	struct tp_device dev;	/* from "# device:" (else the machine's first field) */
	bool mixed_devices;	/* CSVs of different devices */
};

#endif
