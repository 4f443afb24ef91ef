// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's counters as <metrics_dir>/tandem_agent.prom for node_exporter's
 * textfile collector (see prom.h). Per node, per dataset, per release reason
 * and per instance (job label); seconds and counts, no other units.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "lib/prom.h"

#define DS_FAMILIES 8

/* one family over every dataset: which member of the dataset it shows */
static double ds_value(const struct tandem_agent_dataset *ds, int which)
{
	switch (which) {
	case 0: return (double)ds->registrations;
	case 1: return ds->held;
	case 2: return ds->running;
	case 3: return (double)ds->hold_ms_total / 1000.0;
	case 4: return (double)ds->cancelled;
	case 5: return (double)ds->left;
	case 6: return (double)ds->done;
	default: return (double)ds->last_makespan_ms / 1000.0;
	}
}

static const struct {
	const char *name, *help;
	enum tandem_prom_type type;
} ds_families[DS_FAMILIES] = {
	{ "tandem_agent_registrations_total", "Tasks registered by the SPANK plugin.", TANDEM_PROM_COUNTER },
	{ "tandem_agent_held_instances", "Tasks held now, waiting for their release.", TANDEM_PROM_GAUGE },
	{ "tandem_agent_running_instances", "Released tasks still running.", TANDEM_PROM_GAUGE },
	{ "tandem_agent_hold_seconds_total", "Time released tasks spent held, summed.", TANDEM_PROM_COUNTER },
	{ "tandem_agent_cancelled_total", "Held tasks cancelled by a CANCEL request.", TANDEM_PROM_COUNTER },
	{ "tandem_agent_left_total", "Held tasks that went away (scancel, killed).", TANDEM_PROM_COUNTER },
	{ "tandem_agent_exits_total", "Released tasks that exited.", TANDEM_PROM_COUNTER },
	{ "tandem_agent_makespan_seconds",
	  "Measured makespan of the last group of tasks on the dataset (first registration to last exit).",
	  TANDEM_PROM_GAUGE },
};

static void write_datasets(struct tandem_agent *a, struct tandem_prom *p)
{
	for (int f = 0; f < DS_FAMILIES; f++) {
		tandem_prom_family(p, ds_families[f].name, ds_families[f].type, ds_families[f].help);
		for (struct tandem_agent_dataset *ds = a->datasets; ds; ds = ds->next) {
			struct tandem_prom_label l[] = { { "node", a->node }, { "dataset", ds->path } };

			if (f == DS_FAMILIES - 1 && !ds->last_makespan_ms)
				continue;
			tandem_prom_sample(p, l, 2, ds_value(ds, f));
		}
	}
}

static void write_instances(struct tandem_agent *a, struct tandem_prom *p, uint64_t now)
{
	tandem_prom_family(p, "tandem_agent_instance_hold_seconds", TANDEM_PROM_GAUGE,
			   "How long each known task was held (so far, when still held).");
	for (struct tandem_agent_inst *in = a->insts; in; in = in->next) {
		char job[16], task[16];
		struct tandem_prom_label l[] = {
			{ "node", a->node }, { "dataset", in->ds->path }, { "job", job },
			{ "task", task }, { "state", in->state == TANDEM_INST_HELD ? "held" : "running" },
		};
		uint64_t end = in->state == TANDEM_INST_HELD ? now : in->t_release;

		snprintf(job, sizeof(job), "%u", in->job);
		snprintf(task, sizeof(task), "%u", in->task);
		tandem_prom_sample(p, l, 5, (double)(end - in->t_register) / 1000.0);
	}
}

/* the policy's predicted makespan: of the group running now, of the last one */
static void write_predictions(struct tandem_agent *a, struct tandem_prom *p)
{
	tandem_prom_family(p, "tandem_agent_predicted_makespan_seconds", TANDEM_PROM_GAUGE,
			   "Makespan the policy predicted for the dataset's group of tasks "
			   "(group=current: the one running now; last: the last one, measured in "
			   "tandem_agent_makespan_seconds).");
	for (struct tandem_agent_dataset *ds = a->datasets; ds; ds = ds->next) {
		struct tandem_prom_label l[] = { { "node", a->node }, { "dataset", ds->path },
						 { "group", "current" } };

		if (ds->pred_ms)
			tandem_prom_sample(p, l, 3, (double)ds->pred_ms / 1000.0);
		l[2].value = "last";
		if (ds->last_pred_ms)
			tandem_prom_sample(p, l, 3, (double)ds->last_pred_ms / 1000.0);
	}
}

int tandem_agent_write_metrics(struct tandem_agent *a)
{
	struct tandem_prom p;
	int err;

	if (!a->o.metrics_dir)
		return 0;
	err = tandem_prom_open(&p, a->o.metrics_dir, "tandem_agent.prom");
	if (err) {
		tandem_agent_log(a, "internal", "what=metrics dir=%s err=%s", a->o.metrics_dir,
				 strerror(-err));
		return err;
	}
	write_datasets(a, &p);
	tandem_prom_family(&p, "tandem_agent_releases_total", TANDEM_PROM_COUNTER,
			   "Tasks released, by why they were released.");
	for (int i = 0; i < 16 && tandem_agent_release_reasons[i]; i++) {
		struct tandem_prom_label l[] = { { "node", a->node },
						 { "reason", tandem_agent_release_reasons[i] } };

		tandem_prom_sample(&p, l, 2, (double)a->releases[i]);
	}
	tandem_prom_family(&p, "tandem_agent_protocol_errors_total", TANDEM_PROM_COUNTER,
			   "Requests answered with ERR, by code.");
	for (int i = 0; i < 8; i++) {
		struct tandem_prom_label l[] = { { "node", a->node },
						 { "code", tandem_agent_err_codes[i] } };

		tandem_prom_sample(&p, l, 2, (double)a->proto_errors[i]);
	}
	write_instances(a, &p, tandem_agent_now_ms());
	write_predictions(a, &p);
	if (a->policy->metrics)
		a->policy->metrics(a->policy->priv, a, &p);
	err = tandem_prom_commit(&p);
	if (err)
		tandem_agent_log(a, "internal", "what=metrics err=%s", strerror(-err));
	return err;
}
