/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the module library only: the one libnl request engine. Build a
 * request, send it, call a parser for every reply message, and turn a
 * kernel error into one line "kernel reports: <extack message>".
 */
#ifndef TANDEM_CTL_MODULE_NL_H
#define TANDEM_CTL_MODULE_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "module/module.h"

struct tnl_req {
	uint8_t cmd;			/* TANDEM_CMD_* */
	bool dump;			/* NLM_F_DUMP, else a doit with an ACK */
	size_t size;			/* message buffer, 0 = default */
	/* add the attributes from in; 0 or -errno */
	int (*build)(struct nl_msg *msg, const void *in);
	const void *in;
	/* one reply message, attributes indexed by TANDEM_A_*, into out; 0 or -errno */
	int (*parse)(struct nlattr **tb, void *out);
	void *out;
};

/* 0, or -errno with the error already printed */
int tnl_request(struct tnl *nl, const struct tnl_req *req);
/* build callbacks for the common single attributes; in is a uint32_t / a string */
int tnl_put_id(struct nl_msg *msg, const void *in);
int tnl_put_name(struct nl_msg *msg, const void *in);

#endif
