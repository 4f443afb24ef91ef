// SPDX-License-Identifier: GPL-2.0
/*
 * The fixed rules: what SECONDS and progress:F mean, kept by the model's
 * policy (policy_model.c) for those options, and a policy of their own
 * where no model is wanted (tests of the protocol server):
 *   - no other job active on the dataset before this one: start now ("first");
 *   - SECONDS: SECONDS after the latest start (or planned start) of the jobs
 *     registered before it on the dataset ("stagger");
 *   - auto: the same with the agent's --auto-stagger ("auto"), the model
 *     policy's answer for a dataset without a profile;
 *   - progress:F: when every job registered before it on the dataset runs
 *     and has reported progress >= F with PROGRESS ("progress").
 * Jobs that ended do not count: a newcomer after them starts now.
 */
#include "agent.h"

uint64_t tandem_agent_fixed_decide(void *priv, struct tandem_agent *a,
				   struct tandem_agent_inst *in, uint64_t now,
				   const char **reason)
{
	uint64_t prev = 0;
	int others = 0, unknown = 0, behind = 0;
	uint32_t ms;

	(void)priv;
	for (const struct tandem_agent_inst *o = a->insts; o && o != in; o = o->next) {
		uint64_t t;

		if (o->ds != in->ds || o->leader || o->job == in->job)
			continue;
		others++;
		if (o->state == TANDEM_INST_HELD && o->until == TANDEM_AGENT_UNTIL_EVENT)
			unknown = 1;
		if (o->state == TANDEM_INST_HELD ||
		    o->progress < in->stagger.permille)
			behind = 1;
		t = o->state == TANDEM_INST_RUNNING ? o->t_release : o->until;
		if (t != TANDEM_AGENT_UNTIL_EVENT && t > prev)
			prev = t;
	}
	if (!others) {
		*reason = "first";
		return now;
	}
	if (in->stagger.mode == TANDEM_STAGGER_PROGRESS) {
		*reason = "progress";
		return behind ? TANDEM_AGENT_UNTIL_EVENT : now;
	}
	ms = in->stagger.mode == TANDEM_STAGGER_AUTO ? a->o.auto_ms : in->stagger.ms;
	*reason = in->stagger.mode == TANDEM_STAGGER_AUTO ? "auto" : "stagger";
	return unknown ? TANDEM_AGENT_UNTIL_EVENT : prev + ms;
}
