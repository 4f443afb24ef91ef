/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The makespan model as the agent's policy (policy_model.c), with the node
 * side it reads the node's state from (node.h).
 */
#ifndef TANDEM_AGENT_POLICY_MODEL_H
#define TANDEM_AGENT_POLICY_MODEL_H

#include "agent.h"
#include "node.h"

#define MODEL_POLICY_PROFILE_DIR "/var/lib/tandem/profiles"

struct model_policy_opts {
	const char *profile_dir;	/* profiles by dataset path; NULL: none */
	double min_gain;		/* stagger only for at least this gain (fraction) */
	unsigned int recheck_ms;	/* decide again this often while a task is held */
	struct agent_node_opts node;
};

struct model_policy {
	struct tandem_agent_policy policy;	/* what tandem_agent_init() takes */
	struct model_policy_opts o;
	struct agent_node node;
	uint64_t next_check, next_metrics;	/* Unix ms */
};

void model_policy_opts_default(struct model_policy_opts *o);
int model_policy_init(struct model_policy *mp, const struct model_policy_opts *o);
/* after tandem_agent_fini() */
void model_policy_fini(struct model_policy *mp);

#endif
