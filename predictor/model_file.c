// SPDX-License-Identifier: GPL-2.0
/*
 * Model file, version 3, little-endian:
 *
 *   0   "TNDMPRED"            magic
 *   8   u32 version           3 (1 and 2 are read too: see below)
 *   12  u32 hid, reg_hidden, features, use_ghn, nfeat
 *   32  u64 nparams           must match the layout the config implies
 *   40  char trained_on[128]  NUL-terminated description of the data
 *   168 f64 train_dev.feat[3]
 *   192 char train_dev.name[96]
 *   288 f32 feat_mean[nfeat], feat_std[nfeat], params[nparams]
 *   then (version 2) the training data's range, for warnings:
 *       u32 nres, nops, max_gpus, max_nodes
 *       f64 res[8], flops_lo, flops_hi, params_lo, params_hi
 *       char ops[nops][32]
 *   then (version 3) f64 base_w[TP_BASE_TERMS], the cost baseline's weights
 *       (all 0 without TP_FEAT_BASE)
 *   then (version 4) the training host's device probe (PROBE_BYTES):
 *       u32 present (0 or 1), version, ncpu, 0; i64 when; f64 seconds,
 *       rate[TP_PROBE_KINDS], spread[TP_PROBE_KINDS]; char cpu[96]
 *   end u32 CRC-32 (zlib's) of every byte before it
 *
 * Version 3 (before the probe) is version 4 without the probe block.
 * Version 2 (before the cost baseline) is version 3 without base_w and
 * without TP_FEAT_BASE; it is read and predicts as before.
 *
 * Version 1 (before the resolution feature) has no range block and no
 * TP_FEAT_RES; it is read as it was written and predicts as before, with
 * no out-of-distribution warnings. Readers check magic, version, sizes and
 * the checksum before using a byte, so a truncated or corrupted file is
 * an error, never a model.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ghn.h"

#define MAGIC "TNDMPRED"
#define VERSION 4u
#define BASE_BYTES (8u * TP_BASE_TERMS)
#define PROBE_BYTES (32u + 16u * TP_PROBE_KINDS + 96u)
#define HDR 288u
#define OOD_FIXED (16u + 8u * (TP_OOD_MAX_RES + 4))
#define MAX_MODEL_FILE (256u << 20)

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void putf(uint8_t *p, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	put32(p, u);
}

static float getf(const uint8_t *p)
{
	uint32_t u = get32(p);
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static size_t body_end(const struct tp_model *m)
{
	return HDR + 4 * (2 * (size_t)m->nfeat + m->nparams);
}

static size_t file_size(const struct tp_model *m, uint32_t version, uint32_t nops)
{
	return body_end(m) + (version >= 2 ? OOD_FIXED + 32 * (size_t)nops : 0) +
	       (version >= 3 ? BASE_BYTES : 0) + (version >= 4 ? PROBE_BYTES : 0) + 4;
}

static void putd(uint8_t *p, double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	put64(p, u);
}

static double getd(const uint8_t *p)
{
	uint64_t u = get64(p);
	double d;

	memcpy(&d, &u, 8);
	return d;
}

static uint8_t *encode_ood(const struct tp_ood *o, uint8_t *p)
{
	put32(p, (uint32_t)o->nres);
	put32(p + 4, (uint32_t)o->nops);
	put32(p + 8, (uint32_t)o->max_gpus);
	put32(p + 12, (uint32_t)o->max_nodes);
	p += 16;
	for (int k = 0; k < TP_OOD_MAX_RES; k++, p += 8)
		putd(p, k < o->nres ? o->res[k] : 0);
	putd(p, o->flops_lo);
	putd(p + 8, o->flops_hi);
	putd(p + 16, o->params_lo);
	putd(p + 24, o->params_hi);
	p += 32;
	for (int k = 0; k < o->nops; k++, p += 32) {
		memset(p, 0, 32);
		memcpy(p, o->ops[k], strnlen(o->ops[k], 31));
	}
	return p;
}

static uint8_t *encode_probe(const struct tp_model *m, uint8_t *p)
{
	const struct tp_probe *pr = &m->probe;

	memset(p, 0, PROBE_BYTES);
	if (!m->has_probe)
		return p + PROBE_BYTES;
	put32(p, 1);
	put32(p + 4, pr->version);
	put32(p + 8, pr->ncpu);
	put64(p + 16, (uint64_t)pr->when);
	putd(p + 24, pr->seconds);
	for (int k = 0; k < TP_PROBE_KINDS; k++) {
		putd(p + 32 + 8 * k, pr->rate[k]);
		putd(p + 32 + 8 * (TP_PROBE_KINDS + k), pr->spread[k]);
	}
	memcpy(p + 32 + 16 * TP_PROBE_KINDS, pr->cpu, strnlen(pr->cpu, 95));
	return p + PROBE_BYTES;
}

static void encode(const struct tp_model *m, uint8_t *buf)
{
	uint8_t *p = buf + HDR;
	uint64_t dv;

	memset(buf, 0, HDR);
	memcpy(buf, MAGIC, 8);
	put32(buf + 8, VERSION);
	put32(buf + 12, (uint32_t)m->cfg.hid);
	put32(buf + 16, (uint32_t)m->cfg.reg_hidden);
	put32(buf + 20, m->cfg.features);
	put32(buf + 24, m->cfg.use_ghn);
	put32(buf + 28, (uint32_t)m->nfeat);
	put64(buf + 32, m->nparams);
	memcpy(buf + 40, m->trained_on, strnlen(m->trained_on, 127));
	for (int k = 0; k < TP_DEV_FEATS; k++) {
		memcpy(&dv, &m->train_dev.feat[k], 8);
		put64(buf + 168 + 8 * k, dv);
	}
	memcpy(buf + 192, m->train_dev.name, strnlen(m->train_dev.name, 95));
	for (int k = 0; k < m->nfeat; k++, p += 4)
		putf(p, m->feat_mean[k]);
	for (int k = 0; k < m->nfeat; k++, p += 4)
		putf(p, m->feat_std[k]);
	for (size_t i = 0; i < m->nparams; i++, p += 4)
		putf(p, m->params[i]);
	p = encode_ood(&m->ood, p);
	for (int k = 0; k < TP_BASE_TERMS; k++, p += 8)
		putd(p, m->base_w[k]);
	p = encode_probe(m, p);
	put32(p, tp_crc32(0, buf, (size_t)(p - buf)));
}

int tp_model_save(const struct tp_model *m, const char *path)
{
	size_t len = file_size(m, VERSION, (uint32_t)m->ood.nops);
	uint8_t *buf = malloc(len);
	char tmp[4096];
	FILE *f;
	int err = 0;

	if (!buf)
		return tp_fail(-ENOMEM, "out of memory saving the model");
	encode(m, buf);
	/* write a sibling and rename, so a crash never leaves half a model */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f) {
		err = tp_fail(-errno, "%s: %s", tmp, strerror(errno));
		goto out_free;
	}
	if (fwrite(buf, 1, len, f) != len)
		err = tp_fail(-EIO, "%s: write failed", tmp);
	if (fclose(f) && !err)
		err = tp_fail(-errno, "%s: %s", tmp, strerror(errno));
	if (!err && rename(tmp, path))
		err = tp_fail(-errno, "%s: %s", path, strerror(errno));
	if (err)
		unlink(tmp);
out_free:
	free(buf);
	return err;
}

static int decode_header(const uint8_t *buf, size_t len, struct tp_model_config *cfg,
			 uint32_t *nfeat, uint64_t *nparams, uint32_t *version)
{
	if (len < 8 || memcmp(buf, MAGIC, 8))
		return tp_fail(-EBADMSG, "not a tandem predictor model (bad magic)");
	if (len < HDR + 4)
		return tp_fail(-EBADMSG, "model file truncated: %zu bytes, header needs %u",
			       len, HDR + 4);
	*version = get32(buf + 8);
	if (*version < 1 || *version > VERSION)
		return tp_fail(-EPROTONOSUPPORT,
			       "model file version %u is not supported (this library reads 1 to %u; "
			       "retrain with tandemctl predict train)", *version, VERSION);
	cfg->hid = (int)get32(buf + 12);
	cfg->reg_hidden = (int)get32(buf + 16);
	cfg->features = get32(buf + 20);
	cfg->use_ghn = get32(buf + 24) != 0;
	*nfeat = get32(buf + 28);
	*nparams = get64(buf + 32);
	if (*version == 1 && (cfg->features & (TP_FEAT_RES | TP_FEAT_COST)))
		return tp_fail(-EBADMSG, "model file version 1 with the version 2 feature set 0x%x",
			       cfg->features);
	if (*version < 3 && (cfg->features & (TP_FEAT_BASE | TP_FEAT_BASE_ONLY)))
		return tp_fail(-EBADMSG, "model file version %u with the version 3 cost baseline "
			       "(features 0x%x)", *version, cfg->features);
	return 0;
}

/* The range block of a version 2 file; p: its start, within the file. */
static int decode_ood(struct tp_ood *o, const uint8_t *p)
{
	o->nres = (int)get32(p);
	o->nops = (int)get32(p + 4);
	o->max_gpus = (int)get32(p + 8);
	o->max_nodes = (int)get32(p + 12);
	if (o->nres < 0 || o->nres > TP_OOD_MAX_RES || o->nops < 0 || o->nops > TP_OOD_MAX_OPS)
		return tp_fail(-EBADMSG, "model file: bad training-range block");
	p += 16;
	for (int k = 0; k < TP_OOD_MAX_RES; k++, p += 8)
		o->res[k] = getd(p);
	o->flops_lo = getd(p);
	o->flops_hi = getd(p + 8);
	o->params_lo = getd(p + 16);
	o->params_hi = getd(p + 24);
	p += 32;
	for (int k = 0; k < o->nops; k++, p += 32) {
		memcpy(o->ops[k], p, 31);
		o->ops[k][31] = '\0';
	}
	o->known = o->nres > 0 || o->nops > 0;
	return 0;
}

/* The baseline's weights: finite and >= 0 (all 0 in an untrained model). */
static int decode_base(struct tp_model *m, const uint8_t *p)
{
	for (int k = 0; k < TP_BASE_TERMS; k++, p += 8) {
		m->base_w[k] = getd(p);
		if (!isfinite(m->base_w[k]) || m->base_w[k] < 0)
			return tp_fail(-EBADMSG, "model file: cost baseline weight %d is %g", k,
				       m->base_w[k]);
	}
	return 0;
}

/* The probe block: absent (present 0) or a probe with finite rates > 0. */
static int decode_probe(struct tp_model *m, const uint8_t *p)
{
	struct tp_probe *pr = &m->probe;
	uint32_t present = get32(p);

	memset(pr, 0, sizeof(*pr));
	m->has_probe = present == 1;
	if (present > 1)
		return tp_fail(-EBADMSG, "model file: bad probe block (%u)", present);
	if (!present)
		return 0;
	pr->version = get32(p + 4);
	pr->ncpu = get32(p + 8);
	pr->when = (int64_t)get64(p + 16);
	pr->seconds = getd(p + 24);
	for (int k = 0; k < TP_PROBE_KINDS; k++) {
		pr->rate[k] = getd(p + 32 + 8 * k);
		pr->spread[k] = getd(p + 32 + 8 * (TP_PROBE_KINDS + k));
		if (!isfinite(pr->rate[k]) || !(pr->rate[k] > 0))
			return tp_fail(-EBADMSG, "model file: probe rate %d is %g", k, pr->rate[k]);
	}
	memcpy(pr->cpu, p + 32 + 16 * TP_PROBE_KINDS, 95);
	pr->cpu[95] = '\0';
	return 0;
}

static int decode_body(struct tp_model *m, const uint8_t *buf)
{
	const uint8_t *p = buf + HDR;
	uint64_t dv;

	memcpy(m->trained_on, buf + 40, 127);
	m->trained_on[127] = '\0';
	for (int k = 0; k < TP_DEV_FEATS; k++) {
		dv = get64(buf + 168 + 8 * k);
		memcpy(&m->train_dev.feat[k], &dv, 8);
	}
	memcpy(m->train_dev.name, buf + 192, 95);
	m->train_dev.name[95] = '\0';
	for (int k = 0; k < m->nfeat; k++, p += 4)
		m->feat_mean[k] = getf(p);
	for (int k = 0; k < m->nfeat; k++, p += 4)
		m->feat_std[k] = getf(p);
	for (size_t i = 0; i < m->nparams; i++, p += 4)
		m->params[i] = getf(p);
	for (int k = 0; k < m->nfeat; k++)
		if (!isfinite(m->feat_mean[k]) || !(m->feat_std[k] > 0))
			return tp_fail(-EBADMSG, "model file: bad normalisation of feature %d", k);
	for (size_t i = 0; i < m->nparams; i++)
		if (!isfinite(m->params[i]))
			return tp_fail(-EBADMSG, "model file: parameter %zu is not finite", i);
	return 0;
}

int tp_model_load_mem(const void *data, size_t len, struct tp_model **out)
{
	const uint8_t *buf = data;
	struct tp_model_config cfg;
	struct tp_model *m;
	uint64_t nparams = 0;
	uint32_t nfeat = 0, crc, version = 0, nops = 0;
	int err;

	tp_clear_error();
	err = decode_header(buf, len, &cfg, &nfeat, &nparams, &version);
	if (err)
		return err;
	err = tp_model_alloc(&cfg, &m);
	if (err) {
		char msg[400];

		snprintf(msg, sizeof(msg), "%s", tp_errmsg());
		return tp_fail(err, "model file: %s", msg);
	}
	if (nfeat != (uint32_t)m->nfeat || nparams != m->nparams) {
		err = tp_fail(-EBADMSG, "model file: %u features and %llu parameters do not "
			      "match its configuration (%d, %zu)", nfeat,
			      (unsigned long long)nparams, m->nfeat, m->nparams);
		goto out_free;
	}
	if (version >= 2 && len >= body_end(m) + OOD_FIXED + 4)
		nops = get32(buf + body_end(m) + 4);
	if (nops > TP_OOD_MAX_OPS)
		nops = 0;	/* the size check below fails, or the block check */
	if (len != file_size(m, version, nops)) {
		err = tp_fail(-EBADMSG, "model file %s: %zu bytes, expected %zu",
			      len < file_size(m, version, nops) ? "truncated" : "has trailing bytes",
			      len, file_size(m, version, nops));
		goto out_free;
	}
	crc = tp_crc32(0, buf, len - 4);
	if (crc != get32(buf + len - 4)) {
		err = tp_fail(-EBADMSG, "model file corrupt: checksum %08x, stored %08x", crc,
			      get32(buf + len - 4));
		goto out_free;
	}
	err = decode_body(m, buf);
	if (!err && version >= 2)
		err = decode_ood(&m->ood, buf + body_end(m));
	if (!err && version >= 3)
		err = decode_base(m, buf + body_end(m) + OOD_FIXED + 32 * (size_t)nops);
	if (!err && version >= 4)
		err = decode_probe(m, buf + body_end(m) + OOD_FIXED + 32 * (size_t)nops + BASE_BYTES);
	if (err)
		goto out_free;
	m->version = (int)version;
	*out = m;
	return 0;
out_free:
	tp_model_free(m);
	return err;
}

int tp_model_load(const char *path, struct tp_model **out)
{
	char msg[400];
	uint8_t *buf;
	size_t len;
	int err;

	tp_clear_error();
	err = tp_read_file(path, MAX_MODEL_FILE, &buf, &len);
	if (err)
		return err;
	err = tp_model_load_mem(buf, len, out);
	free(buf);
	if (err) {
		snprintf(msg, sizeof(msg), "%s", tp_errmsg());
		return tp_fail(err, "%s: %s", path, msg);
	}
	return 0;
}

/*
 * The built-in models' training hosts were never probed. This is a probe of
 * a host that reports the same CPU ("AMD EPYC", 2 vCPUs): the median of
 * five `tandemctl predict probe --rerun` on 2026-12-06
 * (bench/predictor/records/probe-2026-12-06/). The same string has run the same
 * networks 1.1-2.7x apart (Documentation/predictor.md, "Device probe").
 */
static const struct tp_probe builtin_ref = {
	.version = TP_PROBE_VERSION,
	.cpu = "AMD EPYC",
	.ncpu = 2,
	.when = 1796554448,
	.seconds = 6.351,
	.rate = { 30.3539, 26.7989, 37.3989, 10.1988, 1.57768 },
	.spread = { 0.0346, 0.0795, 0.1031, 0.0471, 0.3465 },	/* run3's */
};

static void probe_builtin_ref(struct tp_model *m)
{
	if (!m->has_probe)
		tp_model_set_probe(m, &builtin_ref);
}

/* predictor/default_model.S */
extern const uint8_t tp_default_model_start[], tp_default_model_end[];
extern const uint8_t tp_default224_model_start[], tp_default224_model_end[];

static int load_builtin(const uint8_t *start, const uint8_t *end, const char *name,
			struct tp_model **out)
{
	int err = tp_model_load_mem(start, (size_t)(end - start), out);

	if (err) {
		char msg[400];

		snprintf(msg, sizeof(msg), "%s", tp_errmsg());
		return tp_fail(err, "%s model: %s", name, msg);
	}
	probe_builtin_ref(*out);
	return 0;
}

int tp_builtin224_base_w(double w[TP_BASE_TERMS])
{
	struct tp_model *m;
	int err = tp_model_load_mem(tp_default224_model_start,
				    (size_t)(tp_default224_model_end - tp_default224_model_start), &m);

	if (err)
		return err;
	memcpy(w, m->base_w, sizeof(m->base_w));
	tp_model_free(m);
	return 0;
}

int tp_model_load_builtin(const struct tp_graph *g, struct tp_model **out, const char **name)
{
	bool big = g->stats.input_res >= TP_BUILTIN_RES_SPLIT;

	*name = big ? "built-in (224x224)" : "built-in (32x32)";
	return big ? load_builtin(tp_default224_model_start, tp_default224_model_end, *name, out)
		   : load_builtin(tp_default_model_start, tp_default_model_end, *name, out);
}

int tp_model_choose(const char *path, const struct tp_graph *g, struct tp_model **out,
		    const char **name)
{
	if (!path)
		path = getenv("TANDEM_PREDICT_MODEL");
	*name = path;
	return path ? tp_model_load(path, out) : tp_model_load_builtin(g, out, name);
}
