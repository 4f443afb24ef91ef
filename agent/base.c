// SPDX-License-Identifier: GPL-2.0
/*
 * What every file of the agent's protocol server uses: the clock, the log
 * and the name tables (error codes, release reasons). At the bottom: calls
 * nothing of the agent.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent.h"

const char *const tandem_agent_err_codes[8] = {
	"proto", "version", "verb", "arg", "perm", "notfound", "busy", "timeout",
};

uint64_t tandem_agent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void tandem_agent_log(struct tandem_agent *a, const char *ev, const char *fmt, ...)
{
	uint64_t now = tandem_agent_now_ms();
	va_list ap;

	if (!a->log)
		return;
	/* one line at a time: a registration's thread may log through ctl_err() */
	flockfile(a->log);
	fprintf(a->log, "ts=%llu.%03llu ev=%s ", (unsigned long long)(now / 1000),
		(unsigned long long)(now % 1000), ev);
	va_start(ap, fmt);
	vfprintf(a->log, fmt, ap);
	va_end(ap);
	fputc('\n', a->log);
	fflush(a->log);
	funlockfile(a->log);
}

const char *const tandem_agent_release_reasons[16] = {
	"first", "stagger", "auto", "progress", "maxhold", "control", "shutdown",
	"same_job", "same_step", "due", "other",
};

int tandem_agent_reason_index(const char *reason)
{
	for (int i = 0; i < 16 && tandem_agent_release_reasons[i]; i++)
		if (!strcmp(reason, tandem_agent_release_reasons[i]))
			return i;
	return 10;	/* "other" */
}
