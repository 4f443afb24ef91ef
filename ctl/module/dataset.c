// SPDX-License-Identifier: GPL-2.0
/* tandem.ko's dataset registry: names, files, state (module.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "module/nl.h"

/* FILE_ADD batches: well under the socket's send buffer */
#define FILE_BATCH_BYTES 65536

void dataset_name_make(const char *given, const char *dir, char *name, size_t len)
{
	char tmp[PATH_MAX];
	const char *base;
	size_t n;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	n = strlen(tmp);
	while (n > 1 && tmp[n - 1] == '/')
		tmp[--n] = 0;
	base = strrchr(tmp, '/');
	base = base && base[1] ? base + 1 : tmp;
	snprintf(name, len, "%s", given ? given : base);
	for (char *p = name; *p; p++)
		if (!(*p == '.' || *p == '_' || *p == '-' || (*p >= '0' && *p <= '9') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			*p = '_';
	if (!*name)
		snprintf(name, len, "dataset");
}

static int info_parse(struct nlattr **tb, void *out)
{
	struct dataset_info *ds = out;

	if (!tb[TANDEM_A_DATASET_ID] || !tb[TANDEM_A_DATASET_NAME])
		return -EBADMSG;
	memset(ds, 0, sizeof(*ds));
	ds->id = nla_get_u32(tb[TANDEM_A_DATASET_ID]);
	snprintf(ds->name, sizeof(ds->name), "%s", nla_get_string(tb[TANDEM_A_DATASET_NAME]));
	if (tb[TANDEM_A_DATASET_NFILES])
		ds->nfiles = nla_get_u32(tb[TANDEM_A_DATASET_NFILES]);
	if (tb[TANDEM_A_DATASET_BYTES])
		ds->bytes = nla_get_u64(tb[TANDEM_A_DATASET_BYTES]);
	if (tb[TANDEM_A_DATASET_PAGES_CACHED])
		ds->pages_cached = nla_get_u64(tb[TANDEM_A_DATASET_PAGES_CACHED]);
	return 0;
}

static int id_parse(struct nlattr **tb, void *out)
{
	if (!tb[TANDEM_A_DATASET_ID])
		return -EBADMSG;
	*(uint32_t *)out = nla_get_u32(tb[TANDEM_A_DATASET_ID]);
	return 0;
}

/* a walk over a dump: the caller's function for every reply */
struct each {
	int (*info)(void *arg, const struct dataset_info *ds);
	int (*file)(void *arg, const struct dataset_file *f);
	int (*state)(void *arg, const struct dataset_state *st);
	void *arg;
};

static int each_info(struct nlattr **tb, void *out)
{
	struct each *e = out;
	struct dataset_info ds;
	int err = info_parse(tb, &ds);

	return err ?: e->info(e->arg, &ds);
}

int dataset_each(struct tnl *nl, int (*fn)(void *arg, const struct dataset_info *ds),
		 void *arg)
{
	struct each e = { .info = fn, .arg = arg };
	struct tnl_req req = {
		.cmd = TANDEM_CMD_DATASET_GET, .dump = true, .parse = each_info, .out = &e,
	};

	return tnl_request(nl, &req);
}

int dataset_info_get(struct tnl *nl, uint32_t id, struct dataset_info *ds)
{
	struct tnl_req req = {
		.cmd = TANDEM_CMD_DATASET_GET, .build = tnl_put_id, .in = &id,
		.parse = info_parse, .out = ds,
	};

	return tnl_request(nl, &req);
}

/* keeps the id of the dataset called name */
struct find {
	const char *name;
	uint32_t id;
};

static int find_one(void *arg, const struct dataset_info *ds)
{
	struct find *f = arg;

	if (!strcmp(ds->name, f->name))
		f->id = ds->id;
	return 0;
}

int dataset_find(struct tnl *nl, const char *name, uint32_t *id)
{
	struct find f = { .name = name };
	int err = dataset_each(nl, find_one, &f);

	if (err)
		return err;
	if (!f.id)
		return -ENOENT;
	*id = f.id;
	return 0;
}

int dataset_resolve(struct tnl *nl, const char *arg, uint32_t *id)
{
	int err;

	if (!parse_u32(arg, id) && *id)
		return 0;
	err = dataset_find(nl, arg, id);
	if (err == -ENOENT)
		ctl_err("no dataset '%s'", arg);
	return err;
}

int dataset_open(struct tnl **nl, const char *arg, uint32_t *id)
{
	int err = tnl_open(nl, false);

	if (err)
		return err;
	err = dataset_resolve(*nl, arg, id);
	if (err) {
		tnl_close(*nl);
		*nl = NULL;
	}
	return err;
}

int dataset_create(struct tnl *nl, const char *name, uint32_t *id)
{
	struct tnl_req req = {
		.cmd = TANDEM_CMD_DATASET_ADD, .build = tnl_put_name, .in = name,
		.parse = id_parse, .out = id,
	};

	return tnl_request(nl, &req);
}

int dataset_find_or_create(struct tnl *nl, const char *name, uint32_t *id, bool *created)
{
	int err = dataset_find(nl, name, id);

	*created = false;
	if (err != -ENOENT)
		return err;
	*created = true;
	return dataset_create(nl, name, id);
}

int dataset_del(struct tnl *nl, uint32_t id)
{
	struct tnl_req req = { .cmd = TANDEM_CMD_DATASET_DEL, .build = tnl_put_id, .in = &id };

	return tnl_request(nl, &req);
}

struct batch {
	uint32_t id;
	const struct file_list *fl;
	size_t next, end;		/* paths [next, end) go in this message */
	uint32_t added, dups;
};

static int batch_build(struct nl_msg *msg, const void *in)
{
	struct batch *b = (struct batch *)in;
	size_t used = NLMSG_HDRLEN + 64;

	if (nla_put_u32(msg, TANDEM_A_DATASET_ID, b->id))
		return -EMSGSIZE;
	for (b->end = b->next; b->end < b->fl->n; b->end++) {
		const char *p = b->fl->paths[b->end];

		used += NLA_ALIGN(NLA_HDRLEN + strlen(p) + 1);
		if (used > FILE_BATCH_BYTES && b->end > b->next)
			break;
		if (nla_put_string(msg, TANDEM_A_FILE_PATH, p))
			return -EMSGSIZE;
	}
	return 0;
}

static int batch_parse(struct nlattr **tb, void *out)
{
	struct batch *b = out;

	if (!tb[TANDEM_A_FILES_ADDED] || !tb[TANDEM_A_FILES_DUPLICATE])
		return -EBADMSG;
	b->added += nla_get_u32(tb[TANDEM_A_FILES_ADDED]);
	b->dups += nla_get_u32(tb[TANDEM_A_FILES_DUPLICATE]);
	return 0;
}

int dataset_add_files(struct tnl *nl, uint32_t id, const struct file_list *fl,
		      uint32_t *added, uint32_t *dups)
{
	struct batch b = { .id = id, .fl = fl };
	struct tnl_req req = {
		.cmd = TANDEM_CMD_FILE_ADD, .size = FILE_BATCH_BYTES + 4096,
		.build = batch_build, .in = &b, .parse = batch_parse, .out = &b,
	};
	int err = 0;

	while (b.next < fl->n) {
		err = tnl_request(nl, &req);
		if (err)
			break;
		b.next = b.end;
	}
	*added = b.added;
	*dups = b.dups;
	return err;
}

static int each_file(struct nlattr **tb, void *out)
{
	struct each *e = out;
	struct dataset_file f = { 0 };

	if (!tb[TANDEM_A_FILE_PATH] || !tb[TANDEM_A_FILE_SIZE])
		return -EBADMSG;
	f.path = nla_get_string(tb[TANDEM_A_FILE_PATH]);
	f.bytes = nla_get_u64(tb[TANDEM_A_FILE_SIZE]);
	if ((f.has_dev = tb[TANDEM_A_FILE_DEV]))
		f.dev = nla_get_u64(tb[TANDEM_A_FILE_DEV]);
	if ((f.has_ino = tb[TANDEM_A_FILE_INO]))
		f.ino = nla_get_u64(tb[TANDEM_A_FILE_INO]);
	if ((f.has_pages = tb[TANDEM_A_FILE_PAGES_CACHED]))
		f.pages_cached = nla_get_u64(tb[TANDEM_A_FILE_PAGES_CACHED]);
	return e->file(e->arg, &f);
}

int dataset_files_each(struct tnl *nl, uint32_t id,
		       int (*fn)(void *arg, const struct dataset_file *f), void *arg)
{
	struct each e = { .file = fn, .arg = arg };
	struct tnl_req req = {
		.cmd = TANDEM_CMD_FILE_GET, .dump = true, .build = tnl_put_id, .in = &id,
		.parse = each_file, .out = &e,
	};

	return tnl_request(nl, &req);
}

/* ---- state ---- */

static void get_nest_u64(struct nlattr *nest, uint64_t *v, int n)
{
	struct nlattr *a;
	int rem;

	memset(v, 0, sizeof(*v) * n);
	if (!nest)
		return;
	nla_for_each_nested(a, nest, rem)
		if (nla_type(a) >= 1 && nla_type(a) <= n && nla_len(a) == 8)
			v[nla_type(a) - 1] = nla_get_u64(a);
}

static int state_parse(struct nlattr **tb, void *out)
{
	struct dataset_state *st = out;

	if (!tb[TANDEM_A_DATASET_ID] || !tb[TANDEM_A_DATASET_NAME])
		return -EBADMSG;
	memset(st, 0, sizeof(*st));
	st->id = nla_get_u32(tb[TANDEM_A_DATASET_ID]);
	snprintf(st->name, sizeof(st->name), "%s", nla_get_string(tb[TANDEM_A_DATASET_NAME]));
	if (tb[TANDEM_A_DATASET_PAGES_CACHED])
		st->pages_cached = nla_get_u64(tb[TANDEM_A_DATASET_PAGES_CACHED]);
	st->node = tb[TANDEM_A_DATASET_NODE] ? (int32_t)nla_get_u32(tb[TANDEM_A_DATASET_NODE]) : -1;
	st->steer_pending = tb[TANDEM_A_STEER_PENDING] ? nla_get_u32(tb[TANDEM_A_STEER_PENDING]) : 0;
	get_nest_u64(tb[TANDEM_A_DATASET_COUNTERS], st->cnt, __TANDEM_CNT_MAX);
	get_nest_u64(tb[TANDEM_A_DATASET_NODE_PAGES], st->node_pages, DATASET_MAX_NODES);
	if (tb[TANDEM_A_PREFETCH_STATE])
		st->pf_state = nla_get_u8(tb[TANDEM_A_PREFETCH_STATE]);
	if (tb[TANDEM_A_PREFETCH_PAGES_DONE])
		st->pf_done = nla_get_u64(tb[TANDEM_A_PREFETCH_PAGES_DONE]);
	if (tb[TANDEM_A_PREFETCH_PAGES_TOTAL])
		st->pf_total = nla_get_u64(tb[TANDEM_A_PREFETCH_PAGES_TOTAL]);
	if (tb[TANDEM_A_PREFETCH_ELAPSED_NS])
		st->pf_elapsed_ns = nla_get_u64(tb[TANDEM_A_PREFETCH_ELAPSED_NS]);
	return 0;
}

int dataset_state_get(struct tnl *nl, uint32_t id, struct dataset_state *st)
{
	struct tnl_req req = {
		.cmd = TANDEM_CMD_DATASET_GET, .build = tnl_put_id, .in = &id,
		.parse = state_parse, .out = st,
	};

	return tnl_request(nl, &req);
}

static int each_state(struct nlattr **tb, void *out)
{
	struct each *e = out;
	struct dataset_state st;
	int err = state_parse(tb, &st);

	return err ?: e->state(e->arg, &st);
}

int dataset_state_each(struct tnl *nl, int (*fn)(void *arg, const struct dataset_state *st),
		       void *arg)
{
	struct each e = { .state = fn, .arg = arg };
	struct tnl_req req = {
		.cmd = TANDEM_CMD_DATASET_GET, .dump = true, .parse = each_state, .out = &e,
	};

	return tnl_request(nl, &req);
}
