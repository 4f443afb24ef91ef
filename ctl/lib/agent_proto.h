/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node agent's socket protocol, version 1 (Documentation/slurm.md has the
 * prose): one text line per message on a UNIX stream socket, a verb or reply
 * kind in capitals, then " key=value" fields; values are percent-encoded.
 *
 *   client -> agent  REGISTER v=1 job=17 step=batch task=0 uid=1000 pid=4242
 *                    stagger=30 maxhold=600 dataset=/data/imagenet cmd=train.py
 *   agent -> client  HOLD id=3 until=1796144820381 reason=stagger
 *   agent -> client  RELEASE id=3 reason=due           (pushed when due)
 *
 * Every message is parsed against one table of fields and one required and
 * optional mask per verb: unknown verbs and keys, repeated keys, missing keys,
 * bad escapes and numbers out of range are errors with a one-line reason.
 * This library has no state and no dependency beyond libc: the SPANK plugin,
 * the agent and tandemctl link it alike.
 */
#ifndef TANDEM_AGENT_PROTO_H
#define TANDEM_AGENT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "lib/stagger.h"

#define TANDEM_AGENT_PROTO_VERSION 1
#define TANDEM_AGENT_SOCKET "/run/tandem/agent.sock"
/* one message, its LF included: fits the longest fields, all escaped */
#define TANDEM_AGENT_LINE_MAX 16384
#define TANDEM_AGENT_DATASET_MAX 4095	/* decoded bytes */
#define TANDEM_AGENT_CMD_MAX 1023	/* decoded bytes */
#define TANDEM_AGENT_MSG_MAX 255	/* ERR text, decoded bytes */
#define TANDEM_AGENT_WORD_MAX 31	/* reason, code, state */
#define TANDEM_AGENT_HOLD_MAX_S TANDEM_STAGGER_MAX_S	/* maxhold and SECONDS, a day */
#define TANDEM_AGENT_ID_MAX 0xfffffff0u	/* job, array ids: Slurm's are lower */
#define TANDEM_AGENT_TASK_MAX 1048575u
#define TANDEM_AGENT_PID_MAX 4194304u	/* the kernel's PID_MAX_LIMIT */

/* step names on the wire; the numbers are Slurm's, so the plugin passes them on */
#define TANDEM_STEP_BATCH 0xfffffffbu
#define TANDEM_STEP_EXTERN 0xfffffffcu
#define TANDEM_STEP_INTERACTIVE 0xfffffffau

enum tandem_agent_verb {
	/* requests, client -> agent */
	TANDEM_REQ_REGISTER,	/* root: a task wants to start */
	TANDEM_REQ_DONE,	/* root: a registered task exited */
	TANDEM_REQ_STATUS,	/* anyone: the agent's instances */
	TANDEM_REQ_RELEASE,	/* root: release a job's held tasks now */
	TANDEM_REQ_CANCEL,	/* root: a job's held tasks exit without starting */
	TANDEM_REQ_PROGRESS,	/* root or the job's owner: fraction done */
	TANDEM_REQ_SHUTDOWN,	/* root: release everything and exit */
	/* replies, agent -> client */
	TANDEM_REP_OK,
	TANDEM_REP_HOLD,	/* registered, held: RELEASE or CANCEL follows */
	TANDEM_REP_RELEASE,	/* start now (final) */
	TANDEM_REP_CANCEL,	/* do not start (final) */
	TANDEM_REP_ERR,		/* final; a task that gets it starts */
	TANDEM_REP_TASK,	/* one STATUS line per instance */
	TANDEM_REP_END,		/* after the last TASK line */
	TANDEM_REP_DATASET,	/* one STATUS line per dataset, after the TASK lines */
	TANDEM_VERB_COUNT,
};

/* field presence bits (struct tandem_agent_msg.have), in the order they are written */
enum tandem_agent_field {
	TANDEM_F_V, TANDEM_F_ID, TANDEM_F_JOB, TANDEM_F_STEP, TANDEM_F_TASK,
	TANDEM_F_ARRAY_JOB, TANDEM_F_ARRAY_TASK, TANDEM_F_UID, TANDEM_F_PID,
	TANDEM_F_STATE, TANDEM_F_STAGGER, TANDEM_F_MAXHOLD, TANDEM_F_UNTIL,
	TANDEM_F_SINCE, TANDEM_F_FRAC, TANDEM_F_STATUS, TANDEM_F_REASON,
	TANDEM_F_CODE, TANDEM_F_MSG, TANDEM_F_N, TANDEM_F_HELD, TANDEM_F_RUNNING,
	TANDEM_F_PRED, TANDEM_F_LASTPRED, TANDEM_F_MEASURED, TANDEM_F_MODEL,
	TANDEM_F_DATASET, TANDEM_F_CMD,	/* the long ones last */
	TANDEM_F_COUNT,
};
#define TANDEM_HAS(m, f) (((m)->have >> (f)) & 1u)

struct tandem_agent_msg {
	enum tandem_agent_verb verb;
	uint32_t have;			/* 1 << enum tandem_agent_field */
	uint32_t v;			/* protocol version of a request */
	uint32_t job, step, task;	/* Slurm's ids (step: TANDEM_STEP_* or N) */
	uint32_t array_job, array_task;	/* both or neither */
	uint32_t uid, pid;
	struct tandem_stagger stagger;
	uint32_t maxhold_s;		/* 1 .. 86400 */
	int32_t status;			/* DONE: the wait(2) status */
	uint16_t frac_permille;		/* PROGRESS, TASK: 0 .. 1000 */
	uint64_t id;			/* the agent's instance id */
	uint64_t until_ms, since_ms;	/* Unix ms; HOLD until=0: not known yet */
	uint32_t n, held, running;	/* counts in OK replies */
	/* predicted makespans (now, of the last group) and the measured one, ms */
	uint64_t pred_ms, lastpred_ms, measured_ms;
	char model[TANDEM_AGENT_WORD_MAX + 1];	/* what the prediction came from */
	char reason[TANDEM_AGENT_WORD_MAX + 1];
	char code[TANDEM_AGENT_WORD_MAX + 1];
	char state[TANDEM_AGENT_WORD_MAX + 1];
	char msg[TANDEM_AGENT_MSG_MAX + 1];
	char dataset[TANDEM_AGENT_DATASET_MAX + 1];
	char cmd[TANDEM_AGENT_CMD_MAX + 1];
};

/* "REGISTER", "HOLD", ...; NULL when out of range */
const char *tandem_agent_verb_name(enum tandem_agent_verb verb);

/*
 * Parse one line (without its LF; len bytes, no NUL needed) as a request
 * (replies = 0) or as a reply (replies = 1). 0, or -EINVAL / -EPROTO (bad
 * version) / -EMSGSIZE with a one-line reason in err; *code then names the
 * ERR code the agent answers with ("proto", "version", "verb", "arg").
 */
int tandem_agent_parse(const char *line, size_t len, int replies,
		       struct tandem_agent_msg *m, char *err, size_t errlen,
		       const char **code);

/*
 * Format m (its verb and the fields in m->have; a request gets v=1 first) as
 * one line with its LF into buf. The length, or -EINVAL (a field the verb
 * does not take, a value out of range) / -ENOSPC.
 */
int tandem_agent_format(const struct tandem_agent_msg *m, char *buf, size_t len);

/* "batch", "extern", "interactive" or the number */
const char *tandem_step_str(uint32_t step, char *buf, size_t len);

/*
 * Percent-encode src into dst (bytes outside A-Z a-z 0-9 - . _ ~ / : , + @
 * become %XX). The length written, or -ENOSPC. Log lines use it too.
 */
int tandem_agent_escape(const char *src, size_t n, char *dst, size_t dstlen);

#endif
