/* SPDX-License-Identifier: GPL-2.0 */
/* Private to calibrate/: one calibration's state (calibration.c, contention.c). */
#ifndef TANDEM_CTL_CALIBRATE_SESSION_H
#define TANDEM_CTL_CALIBRATE_SESSION_H

#include "calibrate/calibrate.h"
#include "module/module.h"

#define CAL_FIRST_READ_LIMIT	120.0	/* s: a start-up longer than this is a wrong command */

struct cal_session {
	const struct cal_request *req;
	const struct sample_set *ds;
	struct cal_times *times;
	struct cal_track trk;		/* the warm runs' tracker, when it can be used */
	char name[TANDEM_NAME_MAX];	/* the dataset's, as run names it */
	/* each instance's warm runs' CPU curves: [i * CAL_MAX_WARM_RUNS + r] */
	struct cal_curve *curves;
};

/*
 * host.cpu_contention into p from the instances that had warm runs run
 * together (contention.c); a run that fails leaves it 0, said on stderr.
 */
void cal_contention(struct cal_session *s, struct profile *p);

#endif
