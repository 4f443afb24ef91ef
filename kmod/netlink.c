// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "tandem", version 1. One command per action, strict
 * per-command policies, CAP_SYS_ADMIN (GENL_ADMIN_PERM) on every state change,
 * extack messages on every refusal. Spec: Documentation/netlink/tandem.yaml.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <net/genetlink.h>
#include <linux/kdev_t.h>

#include "compat.h"
#include "tandem.h"

static struct genl_family tandem_genl_family;

static struct netlink_range_validation tandem_kbps_range = {
	.max = TANDEM_PREFETCH_KBPS_MAX,
};

static const struct nla_policy tandem_dataset_add_policy[TANDEM_A_MAX + 1] = {
	[TANDEM_A_DATASET_NAME] = { .type = NLA_NUL_STRING, .len = TANDEM_NAME_MAX - 1 },
};

static const struct nla_policy tandem_dataset_id_policy[TANDEM_A_MAX + 1] = {
	[TANDEM_A_DATASET_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy tandem_file_add_policy[TANDEM_A_MAX + 1] = {
	[TANDEM_A_DATASET_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[TANDEM_A_FILE_PATH] = { .type = NLA_NUL_STRING, .len = PATH_MAX - 1 },
};

static const struct nla_policy tandem_config_policy[TANDEM_A_MAX + 1] = {
	[TANDEM_A_CXL_NODE] = NLA_POLICY_RANGE(NLA_S32, TANDEM_NODE_NONE, MAX_NUMNODES - 1),
	[TANDEM_A_STEER] = NLA_POLICY_MAX(NLA_U8, 1),
	[TANDEM_A_PREFETCH_KBPS] = NLA_POLICY_FULL_RANGE(NLA_U32, &tandem_kbps_range),
	[TANDEM_A_STEER_KBPS] = NLA_POLICY_FULL_RANGE(NLA_U32, &tandem_kbps_range),
};

static const struct nla_policy tandem_steer_policy[TANDEM_A_MAX + 1] = {
	[TANDEM_A_DATASET_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[TANDEM_A_DATASET_NODE] = NLA_POLICY_RANGE(NLA_S32, -1, MAX_NUMNODES - 1),
};

static const struct nla_policy tandem_prefetch_policy[TANDEM_A_MAX + 1] = {
	[TANDEM_A_DATASET_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[TANDEM_A_FILE_PATH] = { .type = NLA_NUL_STRING, .len = PATH_MAX - 1 },
	[TANDEM_A_PREFETCH_KBPS] = NLA_POLICY_FULL_RANGE(NLA_U32, &tandem_kbps_range),
};

static const struct nla_policy tandem_empty_policy[TANDEM_A_MAX + 1] = {};

/* A reply to info's request; NULL on -ENOMEM. */
static struct sk_buff *tandem_reply_new(struct genl_info *info, void **hdr)
{
	struct sk_buff *skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);

	if (!skb)
		return NULL;
	*hdr = genlmsg_put_reply(skb, info, &tandem_genl_family, 0, info->genlhdr->cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

/* Say in extack that attr's id names no dataset; returns -ENOENT. */
static int tandem_nl_no_dataset(struct netlink_ext_ack *extack, const struct nlattr *attr)
{
	NL_SET_ERR_MSG_ATTR(extack, attr, "no dataset with this id");
	return -ENOENT;
}

/*
 * The dataset whose id attr carries, tandem.lock held; NULL, with the
 * extack message of tandem_nl_no_dataset(), when there is none.
 */
static struct tandem_dataset *tandem_nl_dataset_find(struct netlink_ext_ack *extack,
						     const struct nlattr *attr)
{
	struct tandem_dataset *ds = tandem_dataset_find(nla_get_u32(attr));

	if (!ds)
		tandem_nl_no_dataset(extack, attr);
	return ds;
}

static int tandem_put_u64_nest(struct sk_buff *skb, int type, const u64 *v, int n)
{
	struct nlattr *nest = nla_nest_start(skb, type);
	int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++)
		if (nla_put_u64_64bit(skb, i + 1, v[i], 0))
			goto out_cancel;
	nla_nest_end(skb, nest);
	return 0;

out_cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/*
 * What DATASET_GET reports of a dataset: the fields tandem.lock guards,
 * copied under it, and its files' usage, walked without it (the walk of
 * every cached folio must not hold the registry's lock).
 */
struct tandem_ds_snap {
	u32 id, nr_files, pending;
	s32 node;
	char name[TANDEM_NAME_MAX];
	u64 cnt[__TANDEM_CNT_MAX];
	struct tandem_prefetch_info pf;
	struct tandem_usage use;
};

static void tandem_ds_snap_locked(struct tandem_dataset *ds, struct tandem_ds_snap *s)
{
	int i;

	lockdep_assert_held(&tandem.lock);
	s->id = ds->id;
	strscpy(s->name, ds->name, sizeof(s->name));
	s->nr_files = ds->nr_files;
	s->node = ds->node;
	/*
	 * The queue count first: when it reads 0, the counters read after it
	 * include all the work it counted (pairs with the worker's barrier).
	 */
	s->pending = atomic_read_acquire(&ds->steer_queued);
	for (i = 0; i < __TANDEM_CNT_MAX; i++)
		s->cnt[i] = atomic64_read(&ds->cnt[i]);
	tandem_prefetch_info(ds, &s->pf);
}

static struct tandem_ds_snap *tandem_ds_snap_alloc(void)
{
	struct tandem_ds_snap *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	s->use.node_pages = kcalloc(nr_node_ids, sizeof(*s->use.node_pages), GFP_KERNEL);
	if (!s->use.node_pages) {
		kfree(s);
		return NULL;
	}
	return s;
}

static void tandem_ds_snap_free(struct tandem_ds_snap *s)
{
	if (s)
		kfree(s->use.node_pages);
	kfree(s);
}

/*
 * Snapshot the first dataset with an id in [*id, max] into s; it is held by
 * a reference while its files are walked. false when there is none.
 */
static bool tandem_ds_snap_take(unsigned long *id, unsigned long max,
				struct tandem_ds_snap *s)
{
	struct tandem_dataset *ds;

	mutex_lock(&tandem.lock);
	ds = xa_find(&tandem.datasets, id, max, XA_PRESENT);
	if (ds) {
		tandem_dataset_get(ds);
		tandem_ds_snap_locked(ds, s);
	}
	mutex_unlock(&tandem.lock);
	if (!ds)
		return false;
	tandem_dataset_usage(ds, &s->use);
	tandem_dataset_put(ds);
	return true;
}

static int tandem_dataset_fill(struct sk_buff *skb, const struct tandem_ds_snap *s)
{
	const struct tandem_prefetch_info *pf = &s->pf;

	if (nla_put_u32(skb, TANDEM_A_DATASET_ID, s->id) ||
	    nla_put_string(skb, TANDEM_A_DATASET_NAME, s->name) ||
	    nla_put_u32(skb, TANDEM_A_DATASET_NFILES, s->nr_files) ||
	    nla_put_u64_64bit(skb, TANDEM_A_DATASET_BYTES, s->use.bytes, TANDEM_A_PAD) ||
	    nla_put_u64_64bit(skb, TANDEM_A_DATASET_PAGES_CACHED, s->use.pages_cached,
			      TANDEM_A_PAD) ||
	    nla_put_s32(skb, TANDEM_A_DATASET_NODE, s->node) ||
	    nla_put_u32(skb, TANDEM_A_STEER_PENDING, s->pending) ||
	    tandem_put_u64_nest(skb, TANDEM_A_DATASET_COUNTERS, s->cnt, __TANDEM_CNT_MAX) ||
	    tandem_put_u64_nest(skb, TANDEM_A_DATASET_NODE_PAGES, s->use.node_pages,
				nr_node_ids) ||
	    nla_put_u8(skb, TANDEM_A_PREFETCH_STATE, pf->state) ||
	    nla_put_u64_64bit(skb, TANDEM_A_PREFETCH_PAGES_DONE, pf->pages_done, TANDEM_A_PAD) ||
	    nla_put_u64_64bit(skb, TANDEM_A_PREFETCH_PAGES_TOTAL, pf->pages_total,
			      TANDEM_A_PAD) ||
	    nla_put_u64_64bit(skb, TANDEM_A_PREFETCH_ELAPSED_NS, pf->elapsed_ns, TANDEM_A_PAD))
		return -EMSGSIZE;
	return 0;
}

/* Send a reply built by the caller, or drop it when building failed. */
static int tandem_reply_end(struct sk_buff *msg, void *hdr, struct genl_info *info, int err)
{
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* Tell listeners of the "events" group that a dataset came or went. */
static void tandem_notify_dataset(u8 cmd, u32 id, const char *name)
{
	struct sk_buff *skb;
	void *hdr;

	if (!genl_has_listeners(&tandem_genl_family, &init_net, 0))
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &tandem_genl_family, 0, cmd);
	if (!hdr || nla_put_u32(skb, TANDEM_A_DATASET_ID, id) ||
	    (name && nla_put_string(skb, TANDEM_A_DATASET_NAME, name))) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&tandem_genl_family, skb, 0, 0, GFP_KERNEL);
}

/* prefetch.c calls it (tandem_prefetch_set_done()) when a prefetch ends. */
static void tandem_notify_prefetch_done(u32 id, const struct tandem_prefetch_info *info)
{
	struct sk_buff *skb;
	void *hdr;

	if (READ_ONCE(tandem.exiting) || !genl_has_listeners(&tandem_genl_family, &init_net, 0))
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &tandem_genl_family, 0, TANDEM_CMD_PREFETCH_DONE);
	if (!hdr || nla_put_u32(skb, TANDEM_A_DATASET_ID, id) ||
	    nla_put_u8(skb, TANDEM_A_PREFETCH_STATE, info->state) ||
	    nla_put_u64_64bit(skb, TANDEM_A_PREFETCH_PAGES_DONE, info->pages_done,
			      TANDEM_A_PAD) ||
	    nla_put_u64_64bit(skb, TANDEM_A_PREFETCH_PAGES_TOTAL, info->pages_total,
			      TANDEM_A_PAD) ||
	    nla_put_u64_64bit(skb, TANDEM_A_PREFETCH_ELAPSED_NS, info->elapsed_ns,
			      TANDEM_A_PAD)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&tandem_genl_family, skb, 0, 0, GFP_KERNEL);
}

static int tandem_nl_dataset_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[TANDEM_A_DATASET_NAME];
	struct sk_buff *msg;
	void *hdr;
	u32 id;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, TANDEM_A_DATASET_NAME))
		return -EINVAL;
	err = tandem_dataset_add(nla_data(attr), &id);
	switch (err) {
	case 0:
		break;
	case -EINVAL:
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "dataset name must be 1-63 characters of A-Z a-z 0-9 . _ -");
		return err;
	case -EEXIST:
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "a dataset with this name exists");
		return err;
	case -ENOSPC:
		NL_SET_ERR_MSG(info->extack,
			       "dataset limit reached (module parameter max_datasets)");
		return err;
	default:
		return err;
	}
	tandem_notify_dataset(TANDEM_CMD_DATASET_ADD_NTF, id, nla_data(attr));
	msg = tandem_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	err = nla_put_u32(msg, TANDEM_A_DATASET_ID, id) ||
	      nla_put_string(msg, TANDEM_A_DATASET_NAME, nla_data(attr)) ? -EMSGSIZE : 0;
	return tandem_reply_end(msg, hdr, info, err);
}

static int tandem_nl_dataset_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[TANDEM_A_DATASET_ID];
	int err;

	if (GENL_REQ_ATTR_CHECK(info, TANDEM_A_DATASET_ID))
		return -EINVAL;
	err = tandem_dataset_del(nla_get_u32(attr));
	if (err == -ENOENT)
		tandem_nl_no_dataset(info->extack, attr);
	if (!err)
		tandem_notify_dataset(TANDEM_CMD_DATASET_DEL_NTF, nla_get_u32(attr), NULL);
	return err;
}

static int tandem_nl_dataset_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[TANDEM_A_DATASET_ID];
	unsigned long id;
	struct tandem_ds_snap *s;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, TANDEM_A_DATASET_ID))
		return -EINVAL;
	s = tandem_ds_snap_alloc();
	if (!s)
		return -ENOMEM;
	id = nla_get_u32(attr);
	if (!tandem_ds_snap_take(&id, id, s)) {
		err = tandem_nl_no_dataset(info->extack, attr);
		goto out_free;
	}
	err = -ENOMEM;
	msg = tandem_reply_new(info, &hdr);
	if (!msg)
		goto out_free;
	err = tandem_reply_end(msg, hdr, info, tandem_dataset_fill(msg, s));
out_free:
	tandem_ds_snap_free(s);
	return err;
}

/* One dataset per message; the dump resumes at the id in args[0]. */
static int tandem_nl_dataset_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct tandem_ds_snap *s = tandem_ds_snap_alloc();
	unsigned long id = cb->args[0];
	void *hdr;
	int err = 0;

	if (!s)
		return -ENOMEM;
	while (tandem_ds_snap_take(&id, ULONG_MAX, s)) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &tandem_genl_family, NLM_F_MULTI, TANDEM_CMD_DATASET_GET);
		err = hdr ? tandem_dataset_fill(skb, s) : -EMSGSIZE;
		if (err) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = ++id;
	}
	tandem_ds_snap_free(s);
	/* a full skb ends this round; the dump continues from args[0] */
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

static void tandem_nl_path_error(struct netlink_ext_ack *extack, struct nlattr *a, int err)
{
	switch (err) {
	case -EINVAL:
		NL_SET_ERR_MSG_ATTR(extack, a, "path must be absolute and name a regular file");
		break;
	case -ENOENT:
		NL_SET_ERR_MSG_ATTR(extack, a, "no such file");
		break;
	case -EACCES:
		NL_SET_ERR_MSG_ATTR(extack, a, "permission denied on path");
		break;
	default:
		NL_SET_ERR_MSG_ATTR(extack, a, "cannot resolve path");
	}
}

/* Resolve every FILE_PATH of the request; all or nothing. */
static int tandem_nl_files_resolve(struct genl_info *info, struct tandem_file ***out, int *n)
{
	struct tandem_file **files;
	struct nlattr *a;
	int rem, count = 0, err = 0;

	nla_for_each_attr(a, genlmsg_data(info->genlhdr), genlmsg_len(info->genlhdr), rem)
		count += nla_type(a) == TANDEM_A_FILE_PATH;
	if (!count) {
		NL_SET_ERR_MSG(info->extack, "no file path given");
		return -EINVAL;
	}
	files = kvcalloc(count, sizeof(*files), GFP_KERNEL);
	if (!files)
		return -ENOMEM;
	*n = 0;
	nla_for_each_attr(a, genlmsg_data(info->genlhdr), genlmsg_len(info->genlhdr), rem) {
		if (nla_type(a) != TANDEM_A_FILE_PATH)
			continue;
		files[*n] = tandem_file_alloc(nla_data(a), &err);
		if (!files[*n]) {
			tandem_nl_path_error(info->extack, a, err);
			goto out_free;
		}
		(*n)++;
	}
	*out = files;
	return 0;

out_free:
	while ((*n)--)
		tandem_file_put(files[*n]);
	kvfree(files);
	return err;
}

/* Insert a resolved batch; on -ENOSPC nothing of the batch stays. */
static int tandem_nl_files_insert(struct tandem_dataset *ds, struct tandem_file **files,
				  int n, u32 *added, u32 *dups)
{
	int i, err = 0;

	*added = 0;
	*dups = 0;
	for (i = 0; i < n; i++) {
		err = tandem_file_insert(ds, files[i]);
		if (err && err != -EEXIST)
			break;
		if (!err) {
			(*added)++;
			continue;
		}
		tandem_file_put(files[i]);
		files[i] = NULL;
		(*dups)++;
		err = 0;
	}
	if (!err)
		return 0;
	while (i--)
		if (files[i]) {
			tandem_file_remove(ds, files[i]);
			(*added)--;
		}
	return err;
}

static int tandem_nl_file_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[TANDEM_A_DATASET_ID];
	struct tandem_file **files = NULL;
	struct tandem_dataset *ds;
	u32 added = 0, dups = 0, nfiles = 0;
	struct sk_buff *msg;
	int i, n = 0, err;
	void *hdr;

	if (GENL_REQ_ATTR_CHECK(info, TANDEM_A_DATASET_ID))
		return -EINVAL;
	err = tandem_nl_files_resolve(info, &files, &n);
	if (err)
		return err;
	mutex_lock(&tandem.lock);
	ds = tandem_nl_dataset_find(info->extack, attr);
	if (!ds) {
		err = -ENOENT;
	} else {
		err = tandem_nl_files_insert(ds, files, n, &added, &dups);
		if (err == -ENOSPC)
			NL_SET_ERR_MSG(info->extack,
				       "dataset file limit reached (module parameter max_files)");
		nfiles = ds->nr_files;
	}
	mutex_unlock(&tandem.lock);
	if (err)
		for (i = 0; i < n; i++)
			if (files[i])
				tandem_file_put(files[i]);
	kvfree(files);
	if (err)
		return err;

	msg = tandem_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	err = nla_put_u32(msg, TANDEM_A_FILES_ADDED, added) ||
	      nla_put_u32(msg, TANDEM_A_FILES_DUPLICATE, dups) ||
	      nla_put_u32(msg, TANDEM_A_DATASET_NFILES, nfiles) ? -EMSGSIZE : 0;
	return tandem_reply_end(msg, hdr, info, err);
}

static int tandem_file_fill(struct sk_buff *skb, struct tandem_file *f, char *buf)
{
	char *p = d_path(&f->path, buf, PATH_MAX);

	if (IS_ERR(p))
		p = "(unreachable)";
	if (nla_put_u32(skb, TANDEM_A_DATASET_ID, f->ds->id) ||
	    nla_put_string(skb, TANDEM_A_FILE_PATH, p) ||
	    nla_put_u64_64bit(skb, TANDEM_A_FILE_DEV, new_encode_dev(f->dev), TANDEM_A_PAD) ||
	    nla_put_u64_64bit(skb, TANDEM_A_FILE_INO, f->ino, TANDEM_A_PAD) ||
	    nla_put_u64_64bit(skb, TANDEM_A_FILE_SIZE, i_size_read(f->inode), TANDEM_A_PAD) ||
	    nla_put_u64_64bit(skb, TANDEM_A_FILE_PAGES_CACHED,
			      READ_ONCE(f->inode->i_mapping->nrpages), TANDEM_A_PAD))
		return -EMSGSIZE;
	return 0;
}

/*
 * Files of one dataset, ordered by (dev, ino). The dump resumes after the
 * last (dev, ino) sent (args[1], args[2]), so it stays correct when files
 * come and go between rounds.
 */
static int tandem_nl_file_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr *attr = tandem_dump_attrs(cb)[TANDEM_A_DATASET_ID];
	struct tandem_dataset *ds;
	struct tandem_file *f;
	int err = 0;
	char *buf;
	void *hdr;

	if (!attr) {
		NL_SET_ERR_MSG(cb->extack, "missing dataset id");
		return -EINVAL;
	}
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&tandem.lock);
	ds = tandem_nl_dataset_find(cb->extack, attr);
	if (!ds) {
		err = -ENOENT;
		goto out_unlock;
	}
	for (f = tandem_file_next(ds, cb->args[1], cb->args[2]); f;
	     f = tandem_file_next(ds, f->dev, f->ino)) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &tandem_genl_family, NLM_F_MULTI, TANDEM_CMD_FILE_GET);
		if (!hdr) {
			err = -EMSGSIZE;
			break;
		}
		err = tandem_file_fill(skb, f, buf);
		if (err) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[1] = f->dev;
		cb->args[2] = f->ino;
	}
out_unlock:
	mutex_unlock(&tandem.lock);
	kfree(buf);
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

static int tandem_stats_fill(struct sk_buff *msg)
{
	lockdep_assert_held(&tandem.lock);
	if (nla_put_string(msg, TANDEM_A_VERSION, TANDEM_VERSION) ||
	    nla_put_s32(msg, TANDEM_A_CXL_NODE, tandem.cxl_node) ||
	    nla_put_string(msg, TANDEM_A_CXL_NODE_REASON, tandem.cxl_reason) ||
	    nla_put_u8(msg, TANDEM_A_STEER, tandem.steer) ||
	    nla_put_u32(msg, TANDEM_A_PREFETCH_KBPS, tandem.prefetch_kbps) ||
	    nla_put_u32(msg, TANDEM_A_STEER_KBPS, tandem.steer_kbps) ||
	    nla_put_u32(msg, TANDEM_A_NR_DATASETS, tandem.nr_datasets) ||
	    nla_put_u32(msg, TANDEM_A_NR_FILES, tandem.nr_files) ||
	    nla_put_u32(msg, TANDEM_A_MAX_DATASETS, tandem_max_datasets) ||
	    nla_put_u32(msg, TANDEM_A_MAX_FILES, tandem_max_files) ||
	    nla_put_u64_64bit(msg, TANDEM_A_LIVE_OBJECTS,
			      atomic64_read(&tandem_live_objects), TANDEM_A_PAD))
		return -EMSGSIZE;
	return 0;
}

static int tandem_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = tandem_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&tandem.lock);
	err = tandem_stats_fill(msg);
	mutex_unlock(&tandem.lock);
	return tandem_reply_end(msg, hdr, info, err);
}

/* All given knobs are applied, or none (an invalid node refuses the request). */
static int tandem_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	const char *why = NULL;
	int err = 0;

	if (!tb[TANDEM_A_CXL_NODE] && !tb[TANDEM_A_STEER] && !tb[TANDEM_A_PREFETCH_KBPS] &&
	    !tb[TANDEM_A_STEER_KBPS]) {
		NL_SET_ERR_MSG(info->extack, "nothing to set");
		return -EINVAL;
	}
	mutex_lock(&tandem.lock);
	if (tb[TANDEM_A_CXL_NODE]) {
		err = tandem_node_set(nla_get_s32(tb[TANDEM_A_CXL_NODE]), &why);
		if (err) {
			/* why: the one reason tandem_node_set() refuses */
			NL_SET_ERR_MSG_ATTR(info->extack, tb[TANDEM_A_CXL_NODE],
					    "cxl_node: not an online NUMA node with memory (node id, -1 = auto, -2 = none)");
			goto out_unlock;
		}
	}
	if (tb[TANDEM_A_STEER])
		WRITE_ONCE(tandem.steer, nla_get_u8(tb[TANDEM_A_STEER]));
	if (tb[TANDEM_A_PREFETCH_KBPS])
		WRITE_ONCE(tandem.prefetch_kbps, nla_get_u32(tb[TANDEM_A_PREFETCH_KBPS]));
	if (tb[TANDEM_A_STEER_KBPS])
		WRITE_ONCE(tandem.steer_kbps, nla_get_u32(tb[TANDEM_A_STEER_KBPS]));
out_unlock:
	mutex_unlock(&tandem.lock);
	return err;
}

static int tandem_nl_steer_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[TANDEM_A_DATASET_ID];
	struct nlattr *node = info->attrs[TANDEM_A_DATASET_NODE];
	struct tandem_dataset *ds;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, TANDEM_A_DATASET_ID))
		return -EINVAL;
	mutex_lock(&tandem.lock);
	ds = tandem_nl_dataset_find(info->extack, attr);
	err = -ENOENT;
	if (!ds)
		goto out_unlock;
	err = -EINVAL;
	if (node && nla_get_s32(node) >= 0 && tandem_node_validate(nla_get_s32(node))) {
		NL_SET_ERR_MSG_ATTR(info->extack, node, "not an online NUMA node with memory");
		goto out_unlock;
	}
	if (!READ_ONCE(tandem.steer)) {
		NL_SET_ERR_MSG(info->extack, "steering is off (steer=0)");
		goto out_unlock;
	}
	if (node)
		WRITE_ONCE(ds->node, nla_get_s32(node));
	err = tandem_steer_dataset(ds);
	if (err == -ENODEV)
		NL_SET_ERR_MSG(info->extack,
			       "no target node: cxl_node is -2 and the dataset has no node of its own");
out_unlock:
	mutex_unlock(&tandem.lock);
	return err;
}

/* The i-th FILE_PATH attribute of the request. */
static struct nlattr *tandem_nl_nth_path(struct genl_info *info, int i)
{
	struct nlattr *a;
	int rem;

	nla_for_each_attr(a, genlmsg_data(info->genlhdr), genlmsg_len(info->genlhdr), rem)
		if (nla_type(a) == TANDEM_A_FILE_PATH && !i--)
			return a;
	return NULL;
}

/*
 * The dataset's files that the resolved paths tmp[0..n) name, in order,
 * with references.
 */
static int tandem_nl_prefetch_match(struct genl_info *info, struct tandem_dataset *ds,
				    struct tandem_file **tmp, int n, struct tandem_file **files)
{
	struct tandem_file *f;
	int i;

	lockdep_assert_held(&tandem.lock);
	for (i = 0; i < n; i++) {
		f = tandem_file_next(ds, tmp[i]->dev, tmp[i]->ino - 1);
		if (!f || f->dev != tmp[i]->dev || f->ino != tmp[i]->ino)
			goto out_put;
		tandem_file_get(f);
		files[i] = f;
	}
	return n;

out_put:
	NL_SET_ERR_MSG_ATTR(info->extack, tandem_nl_nth_path(info, i),
			    "file is not in this dataset");
	while (i--)
		tandem_file_put(files[i]);
	return -ENOENT;
}

/* All files of the dataset (ordered by device and inode), with references. */
static int tandem_nl_prefetch_all(struct tandem_dataset *ds, struct tandem_file **files)
{
	struct rb_node *n;
	int i = 0;

	for (n = rb_first(&ds->files); n; n = rb_next(n)) {
		files[i] = rb_entry(n, struct tandem_file, node);
		tandem_file_get(files[i++]);
	}
	return i;
}

/* Start the prefetch of ds, tandem.lock held; tmp[0..n): resolved paths, or all. */
static int tandem_nl_prefetch_locked(struct genl_info *info, struct tandem_dataset *ds,
				     struct tandem_file **tmp, int n)
{
	struct nlattr *kbps = info->attrs[TANDEM_A_PREFETCH_KBPS];
	struct tandem_file **files;
	int err;

	files = kvcalloc(max_t(int, 1, n ?: ds->nr_files), sizeof(*files), GFP_KERNEL);
	if (!files)
		return -ENOMEM;
	n = n ? tandem_nl_prefetch_match(info, ds, tmp, n, files) :
		tandem_nl_prefetch_all(ds, files);
	if (n < 0) {
		kvfree(files);
		return n;
	}
	err = tandem_prefetch_start(ds, files, n, kbps ? nla_get_u32(kbps) : 0);
	if (err == -EBUSY)
		NL_SET_ERR_MSG(info->extack, "a prefetch of this dataset is running");
	else if (err == -ENODEV)
		NL_SET_ERR_MSG(info->extack,
			       "no target node: cxl_node is -2 and the dataset has no node of its own");
	return err;
}

/* Paths are resolved (kern_path) before tandem.lock is taken. */
static int tandem_nl_prefetch_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[TANDEM_A_DATASET_ID];
	struct tandem_file **tmp = NULL;
	struct tandem_dataset *ds;
	int i, n = 0, err;

	if (GENL_REQ_ATTR_CHECK(info, TANDEM_A_DATASET_ID))
		return -EINVAL;
	if (tandem_nl_nth_path(info, 0)) {
		err = tandem_nl_files_resolve(info, &tmp, &n);
		if (err)
			return err;
	}
	mutex_lock(&tandem.lock);
	ds = tandem_nl_dataset_find(info->extack, attr);
	err = ds ? tandem_nl_prefetch_locked(info, ds, tmp, n) : -ENOENT;
	mutex_unlock(&tandem.lock);
	for (i = 0; i < n; i++)
		tandem_file_put(tmp[i]);
	kvfree(tmp);
	return err;
}

static int tandem_nl_prefetch_cancel_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[TANDEM_A_DATASET_ID];
	struct tandem_dataset *ds;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, TANDEM_A_DATASET_ID))
		return -EINVAL;
	mutex_lock(&tandem.lock);
	ds = tandem_nl_dataset_find(info->extack, attr);
	if (!ds) {
		err = -ENOENT;
	} else {
		err = tandem_prefetch_cancel(ds);
		if (err)
			NL_SET_ERR_MSG(info->extack, "no prefetch of this dataset is running");
	}
	mutex_unlock(&tandem.lock);
	return err;
}

static const struct genl_ops tandem_genl_ops[] = {
	{
		.cmd = TANDEM_CMD_DATASET_ADD,
		.doit = tandem_nl_dataset_add_doit,
		.policy = tandem_dataset_add_policy,
		.maxattr = TANDEM_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TANDEM_CMD_DATASET_DEL,
		.doit = tandem_nl_dataset_del_doit,
		.policy = tandem_dataset_id_policy,
		.maxattr = TANDEM_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TANDEM_CMD_DATASET_GET,
		.doit = tandem_nl_dataset_get_doit,
		.dumpit = tandem_nl_dataset_get_dumpit,
		.policy = tandem_dataset_id_policy,
		.maxattr = TANDEM_A_MAX,
	},
	{
		.cmd = TANDEM_CMD_FILE_ADD,
		.doit = tandem_nl_file_add_doit,
		.policy = tandem_file_add_policy,
		.maxattr = TANDEM_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TANDEM_CMD_FILE_GET,
		.dumpit = tandem_nl_file_get_dumpit,
		.policy = tandem_dataset_id_policy,
		.maxattr = TANDEM_A_MAX,
	},
	{
		.cmd = TANDEM_CMD_STATS_GET,
		.doit = tandem_nl_stats_get_doit,
		.policy = tandem_empty_policy,
		.maxattr = TANDEM_A_MAX,
	},
	{
		.cmd = TANDEM_CMD_CONFIG_SET,
		.doit = tandem_nl_config_set_doit,
		.policy = tandem_config_policy,
		.maxattr = TANDEM_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TANDEM_CMD_STEER,
		.doit = tandem_nl_steer_doit,
		.policy = tandem_steer_policy,
		.maxattr = TANDEM_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TANDEM_CMD_PREFETCH,
		.doit = tandem_nl_prefetch_doit,
		.policy = tandem_prefetch_policy,
		.maxattr = TANDEM_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TANDEM_CMD_PREFETCH_CANCEL,
		.doit = tandem_nl_prefetch_cancel_doit,
		.policy = tandem_dataset_id_policy,
		.maxattr = TANDEM_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
};

/*
 * GENL_ADMIN_PERM alone checks CAP_NET_ADMIN; state changes here move page
 * cache and pin files system-wide, so they need CAP_SYS_ADMIN as well,
 * checked against the sender's credentials at send time.
 */
static int tandem_nl_pre_doit(const tandem_genl_ops_t *ops, struct sk_buff *skb,
			      struct genl_info *info)
{
	if (!(ops->flags & GENL_ADMIN_PERM))
		return 0;
	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, "CAP_SYS_ADMIN is required");
		return -EPERM;
	}
	if (READ_ONCE(tandem.exiting)) {
		NL_SET_ERR_MSG(info->extack, "tandem.ko is unloading");
		return -ESHUTDOWN;
	}
	return 0;
}

static const struct genl_multicast_group tandem_mcgrps[] = {
	{ .name = TANDEM_MCGRP_EVENTS, },
};

static struct genl_family tandem_genl_family __ro_after_init = {
	.name = TANDEM_GENL_NAME,
	.version = TANDEM_GENL_VERSION,
	.module = THIS_MODULE,
	.ops = tandem_genl_ops,
	.n_ops = ARRAY_SIZE(tandem_genl_ops),
	.mcgrps = tandem_mcgrps,
	.n_mcgrps = ARRAY_SIZE(tandem_mcgrps),
	.pre_doit = tandem_nl_pre_doit,
	/*
	 * Without this, genetlink runs every request of the family under its
	 * global genl_mutex, so DATASET_GET's walk of the cached folios (done
	 * outside tandem.lock) would still stall every other request. The
	 * handlers take tandem.lock for registry state themselves; unloading
	 * waits for requests in flight (genl_unregister_family takes cb_lock
	 * for writing, which every request holds for reading).
	 */
	.parallel_ops = true,
};

int tandem_netlink_init(void)
{
	int err = genl_register_family(&tandem_genl_family);

	if (!err)
		tandem_prefetch_set_done(tandem_notify_prefetch_done);
	return err;
}

/* After tandem_prefetch_stop_all(): no prefetch runs to send an event. */
void tandem_netlink_exit(void)
{
	tandem_prefetch_set_done(NULL);
	genl_unregister_family(&tandem_genl_family);
}
