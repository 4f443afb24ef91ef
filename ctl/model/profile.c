// SPDX-License-Identifier: GPL-2.0
/* Calibration profile: JSON load/save and instance descriptions. */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/units.h"
#include "model/model.h"

void profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	p->version = PROFILE_VERSION;
	p->cxl_node = -1;
	snprintf(p->cold_method, sizeof(p->cold_method), "fadvise");
}

void profile_free(struct profile *p)
{
	free(p->dataset_path);
	for (int i = 0; i < p->ninst; i++)
		free(p->inst[i].cmd);
	profile_init(p);
}

double profile_cache(const struct profile *p, bool steer, double frac)
{
	return steer ? frac * p->cache_dram + p->cache_cxl : p->cache_dram + frac * p->cache_cxl;
}

void profile_inst_default(struct model_inst *in, int idx)
{
	memset(in, 0, sizeof(*in));
	snprintf(in->name, sizeof(in->name), "%c", idx < 26 ? 'A' + idx : '?');
	if (idx >= 26)
		snprintf(in->name, sizeof(in->name), "i%d", idx);
	in->epochs = 1;
	in->order = MODEL_ORDER_INDEP;
	in->seed = idx + 1;
	in->window = 8.0 * 1024 * 1024;
}

/* ---- instance descriptions ---- */

struct inst_kv {
	double step, sample;
	bool have_rate;
};

/* keys whose value is one double of struct model_inst, as one parser reads it */
static const struct {
	const char *key;
	int (*parse)(const char *s, double *out);
	size_t off;
} inst_doubles[] = {
	{ "window", units_parse_size, offsetof(struct model_inst, window) },
	{ "mem", units_parse_size, offsetof(struct model_inst, mem) },
	{ "startup", units_parse_duration, offsetof(struct model_inst, startup) },
	/* CPU-seconds */
	{ "startup_cpu", units_parse_duration, offsetof(struct model_inst, startup_cpu) },
	{ "gap", units_parse_duration, offsetof(struct model_inst, epoch_gap) },
	{ "exit", units_parse_duration, offsetof(struct model_inst, exit) },
	{ "sample_bytes", units_parse_size, offsetof(struct model_inst, sample_bytes) },
};

/* a bounded count (epochs=, batch=, streams=) */
static int inst_count(const char *val, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (units_parse_bytes(val, out) || *out < lo || *out > hi)
		return -EINVAL;
	return 0;
}

/* CPU-seconds per MiB (cpu=, cpu_task=), what a user can measure, per byte */
static int inst_cpu(const char *val, double *per_byte)
{
	double d;

	if (units_parse_size(val, &d))
		return -EINVAL;
	*per_byte = d / (1024.0 * 1024.0);
	return 0;
}

/* a string of at least one character that fits buf (name=, graph=) */
static int inst_str(const char *val, char *buf, size_t len)
{
	if (!*val || strlen(val) >= len)
		return -EINVAL;
	snprintf(buf, len, "%s", val);
	return 0;
}

static int inst_key(struct model_inst *in, struct inst_kv *kv, const char *key,
		    const char *val)
{
	uint64_t u;
	int err;

	for (size_t i = 0; i < sizeof(inst_doubles) / sizeof(inst_doubles[0]); i++)
		if (!strcmp(key, inst_doubles[i].key))
			return inst_doubles[i].parse(val, (double *)((char *)in + inst_doubles[i].off));
	if (!strcmp(key, "name"))
		return inst_str(val, in->name, sizeof(in->name));
	if (!strcmp(key, "graph"))
		return inst_str(val, in->graph, sizeof(in->graph));
	if (!strcmp(key, "rate")) {
		kv->have_rate = true;
		return units_parse_size(val, &in->rate);
	}
	if (!strcmp(key, "step"))
		return units_parse_duration(val, &kv->step);
	if (!strcmp(key, "sample"))
		return units_parse_size(val, &kv->sample);
	if (!strcmp(key, "order"))
		return model_order_parse(val, &in->order);
	if (!strcmp(key, "seed"))
		return units_parse_bytes(val, &in->seed);
	if (!strcmp(key, "cpu"))
		return inst_cpu(val, &in->cpu_per_byte);
	if (!strcmp(key, "cpu_task"))
		return inst_cpu(val, &in->cpu_task_per_byte);
	if (!strcmp(key, "epochs")) {
		err = inst_count(val, 0, 1000000, &u);
		in->epochs = err ? in->epochs : u;
		return err;
	}
	if (!strcmp(key, "batch")) {
		err = inst_count(val, 1, 1000000, &u);
		in->batch = err ? in->batch : u;
		return err;
	}
	if (!strcmp(key, "streams")) {
		err = inst_count(val, 0, 1024, &u);
		in->streams = err ? in->streams : u;
		return err;
	}
	return -ENOENT;
}

int profile_inst_parse(const char *spec, struct model_inst *in, char *err, size_t errlen)
{
	struct inst_kv kv = { 0 };
	char *copy = strdup(spec), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			snprintf(err, errlen, "'%s': expected KEY=VALUE", tok);
			ret = -EINVAL;
			goto free_copy;
		}
		*eq = '\0';
		ret = inst_key(in, &kv, tok, eq + 1);
		if (ret) {
			snprintf(err, errlen, ret == -ENOENT ? "unknown key '%s'" :
				 "bad value for '%s': '%s'", tok, eq + 1);
			ret = -EINVAL;
			goto free_copy;
		}
	}
	if (!kv.have_rate && kv.step > 0 && kv.sample > 0)
		in->rate = kv.sample / kv.step;
	else if (!kv.have_rate && (kv.step > 0 || kv.sample > 0)) {
		snprintf(err, errlen, "step= needs sample= (rate = sample/step)");
		ret = -EINVAL;
	}
free_copy:
	free(copy);
	return ret;
}

/* ---- save ---- */

static void save_nodes(struct jw *w, const struct profile *p)
{
	jw_arr_open(w, "nodes");
	for (int i = 0; i < p->nnodes; i++) {
		const struct profile_node *n = &p->nodes[i];

		jw_obj_open(w, NULL);
		jw_s64(w, "node", n->id);
		jw_bool(w, "cpus", n->has_cpus);
		jw_double(w, "total_bytes", n->total);
		jw_double(w, "free_bytes", n->free);
		jw_double(w, "file_bytes", n->file);
		jw_double(w, "avail_bytes", n->avail);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static void save_warm(struct jw *w, const struct profile_warm *wm)
{
	jw_obj_open(w, "warm_run");
	jw_str(w, "method", wm->method);
	jw_double(w, "seconds", wm->seconds);
	jw_double(w, "first_read_s", wm->first_read_s);
	jw_double(w, "window_s", wm->window_s);
	jw_double(w, "bytes", wm->bytes);
	jw_double(w, "cpu_s", wm->cpu_s);
	jw_bool(w, "epoch_seen", wm->epoch_seen);
	jw_bool(w, "window_measured", wm->window_measured);
	jw_bool(w, "exit_measured", wm->exit_measured);
	jw_str(w, "exit_from", wm->exit_from[0] ? wm->exit_from : NULL);
	jw_bool(w, "epoch2_seen", wm->epoch2_seen);
	jw_u64(w, "runs", wm->runs ? wm->runs : 1);
	jw_double(w, "rate_min_bps", wm->rate_min);
	jw_double(w, "rate_max_bps", wm->rate_max);
	jw_obj_close(w);
}

/* host.contention: calibrate's runs of the instances together, or null */
static void save_contention(struct jw *w, const struct profile *p)
{
	const struct profile_contention *c = &p->contention;

	if (!c->runs) {
		jw_null(w, "contention");
		return;
	}
	jw_obj_open(w, "contention");
	jw_str(w, "method", "together");
	jw_u64(w, "runs", c->runs);
	jw_double(w, "measured", c->measured);
	jw_double(w, "min", c->c_min);
	jw_double(w, "max", c->c_max);
	jw_double(w, "window_s", c->span_s);
	jw_double(w, "seconds", c->seconds);
	jw_arr_open(w, "instances");
	for (int i = 0; i < c->n; i++) {
		jw_obj_open(w, NULL);
		jw_str(w, "name", p->inst[c->inst[i]].m.name);
		jw_double(w, "cpu_ratio", c->ratio[i]);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_obj_close(w);
}

static void save_pred(struct jw *w, const struct profile_inst *pi)
{
	const struct profile_pred *pr = &pi->pred;

	jw_obj_open(w, "predictor");
	jw_str(w, "graph", pi->m.graph);
	jw_double(w, "batch", pi->m.batch);
	jw_double(w, "sample_bytes", pi->m.sample_bytes);
	jw_double(w, "iteration_s", pr->iteration_s);
	jw_double(w, "bytes_per_iteration", pr->bytes_per_iter);
	jw_str(w, "model", pr->model);
	jw_str(w, "trained_on", pr->trained_on);
	jw_double(w, "probe_ratio", pr->probe_ratio);
	jw_str(w, "probe", pr->probe);
	jw_arr_open(w, "warnings");
	for (int i = 0; i < pr->nwarn && i < PROFILE_PRED_WARN; i++)
		jw_str(w, NULL, pr->warn[i]);
	jw_arr_close(w);
	jw_obj_close(w);
}

static void save_inst(struct jw *w, const struct profile_inst *pi)
{
	const struct model_inst *in = &pi->m;

	jw_obj_open(w, NULL);
	jw_str(w, "name", in->name);
	jw_double(w, "rate_bps", in->rate);
	jw_str(w, "rate_source", pi->rate_source[0] ? pi->rate_source : PROFILE_SRC_RATE);
	jw_u64(w, "epochs", in->epochs);
	jw_str(w, "order", model_order_name(in->order));
	jw_u64(w, "seed", in->seed);
	jw_double(w, "window_bytes", in->window);
	jw_double(w, "cpu_s_per_byte", in->cpu_per_byte);
	jw_double(w, "mem_bytes", in->mem);
	jw_double(w, "startup_s", in->startup);
	jw_double(w, "startup_cpu_s", in->startup_cpu);
	jw_double(w, "epoch_gap_s", in->epoch_gap);
	jw_double(w, "streams", in->streams);
	jw_double(w, "exit_s", in->exit);
	jw_double(w, "cpu_task_s_per_byte", in->cpu_task_per_byte);
	jw_str(w, "cmd", pi->cmd);
	if (pi->warm.method[0])
		save_warm(w, &pi->warm);
	else
		jw_null(w, "warm_run");
	if (!strcmp(pi->rate_source, PROFILE_SRC_PRED))
		save_pred(w, pi);
	else
		jw_null(w, "predictor");
	jw_obj_close(w);
}

static void save_doc(struct jw *w, const struct profile *p)
{
	jw_obj_open(w, NULL);
	jw_s64(w, "tandem_profile", p->version);
	jw_str(w, "created", p->created);
	jw_double(w, "calibration_seconds", p->calib_seconds);
	jw_double(w, "storage_seconds", p->storage_seconds);
	jw_double(w, "warmup_seconds", p->warmup_seconds);
	jw_obj_open(w, "dataset");
	jw_str(w, "path", p->dataset_path);
	jw_double(w, "bytes", p->dataset_bytes);
	jw_u64(w, "files", p->files);
	jw_double(w, "record_size", p->record_size);
	jw_obj_close(w);
	jw_obj_open(w, "storage");
	jw_arr_open(w, "bandwidth_bps");
	for (int k = 0; k < p->nbw; k++)
		jw_double(w, NULL, p->bw[k]);
	jw_arr_close(w);
	jw_double(w, "eta", p->nbw > 1 ? p->bw[1] / p->bw[0] : NAN);
	jw_str(w, "cold_method", p->cold_method);
	jw_double(w, "sample_bytes", p->sample_bytes);
	jw_obj_close(w);
	jw_obj_open(w, "memory");
	jw_s64(w, "cxl_node", p->cxl_node);
	jw_double(w, "cache_dram_bytes", p->cache_dram);
	jw_double(w, "cache_cxl_bytes", p->cache_cxl);
	jw_double(w, "mem_available_bytes", p->mem_available);
	save_nodes(w, p);
	jw_obj_close(w);
	jw_obj_open(w, "host");
	jw_double(w, "cpus", p->ncpu);
	jw_double(w, "cpu_contention", p->cpu_contention);
	save_contention(w, p);
	jw_obj_close(w);
	jw_arr_open(w, "instances");
	for (int i = 0; i < p->ninst; i++)
		save_inst(w, &p->inst[i]);
	jw_arr_close(w);
	jw_obj_close(w);
}

static int save_to(FILE *f, const struct profile *p)
{
	struct jw w;
	int err;

	jw_init(&w, f, true);
	save_doc(&w, p);
	err = jw_finish(&w);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/*
 * A regular file is written to a temporary file and renamed, so a reader
 * never sees half of it; anything else (/dev/stdout, a pipe) is written in
 * place and never replaced.
 */
int profile_save(const char *path, const struct profile *p)
{
	size_t len = strlen(path) + 8;
	struct stat st;
	char *tmp;
	FILE *f;
	int err;

	if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
		f = fopen(path, "w");
		return f ? save_to(f, p) : -errno;
	}
	tmp = malloc(len);
	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len, "%s.tmp", path);
	f = fopen(tmp, "w");
	err = f ? save_to(f, p) : -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err && f)
		unlink(tmp);
	free(tmp);
	return err;
}

/* ---- load ---- */

static int load_num(const json_t *o, const char *key, double *out, bool required)
{
	int err = tjson_get_num(o, key, out);

	return err == -ENOENT && !required ? 0 : err;
}

static void load_strbuf(const json_t *o, const char *key, char *buf, size_t len)
{
	const char *s;

	if (!tjson_get_str(o, key, &s))
		snprintf(buf, len, "%s", s);
}

static int load_dataset(const json_t *d, struct profile *p)
{
	const char *path;
	double files = 0;
	int err;

	if (!d)
		return -EINVAL;
	err = load_num(d, "bytes", &p->dataset_bytes, true);
	err = err ?: load_num(d, "files", &files, false);
	err = err ?: load_num(d, "record_size", &p->record_size, false);
	if (err)
		return err;
	p->files = files;
	if (!tjson_get_str(d, "path", &path)) {
		p->dataset_path = strdup(path);
		if (!p->dataset_path)
			return -ENOMEM;
	}
	return 0;
}

static int load_storage(const json_t *s, struct profile *p)
{
	const json_t *bw = json_object_get(s, "bandwidth_bps"), *c;
	size_t i;

	if (!json_is_array(bw) || !json_array_size(bw))
		return -EINVAL;
	p->nbw = 0;
	json_array_foreach(bw, i, c) {
		if (p->nbw == MODEL_MAX_BW)
			break;
		if (!json_is_number(c) || !(json_number_value(c) > 0))
			return -EINVAL;
		p->bw[p->nbw++] = json_number_value(c);
	}
	load_strbuf(s, "cold_method", p->cold_method, sizeof(p->cold_method));
	return load_num(s, "sample_bytes", &p->sample_bytes, false);
}

static int load_memory(const json_t *m, struct profile *p)
{
	const json_t *nodes = json_object_get(m, "nodes"), *c;
	double cxl = -1;
	size_t i;
	int err;

	err = load_num(m, "cache_dram_bytes", &p->cache_dram, true);
	err = err ?: load_num(m, "cache_cxl_bytes", &p->cache_cxl, false);
	err = err ?: load_num(m, "mem_available_bytes", &p->mem_available, false);
	err = err ?: load_num(m, "cxl_node", &cxl, false);
	if (err)
		return err;
	p->cxl_node = cxl;
	json_array_foreach(nodes, i, c) {
		struct profile_node *n;
		double id = 0;

		if (p->nnodes == PROFILE_MAX_NODES)
			break;
		n = &p->nodes[p->nnodes++];
		load_num(c, "node", &id, false);
		load_num(c, "total_bytes", &n->total, false);
		load_num(c, "free_bytes", &n->free, false);
		load_num(c, "file_bytes", &n->file, false);
		load_num(c, "avail_bytes", &n->avail, false);
		n->id = id;
		n->has_cpus = json_is_true(json_object_get(c, "cpus"));
	}
	return 0;
}

/* a count of runs: a whole number from 1 to 1000 (the reader gives reals), else none */
static unsigned load_runs(const json_t *o, unsigned none)
{
	double runs = 0;

	load_num(o, "runs", &runs, false);
	return runs >= 1 && runs <= 1000 && runs == (unsigned)runs ? (unsigned)runs : none;
}

/* how C was measured, for run's range: its runs and their range (not the instances) */
static void load_contention(const json_t *o, struct profile_contention *c)
{
	memset(c, 0, sizeof(*c));
	if (!json_is_object(o))
		return;
	c->runs = load_runs(o, 0);
	load_num(o, "measured", &c->measured, false);
	load_num(o, "min", &c->c_min, false);
	load_num(o, "max", &c->c_max, false);
	load_num(o, "window_s", &c->span_s, false);
	load_num(o, "seconds", &c->seconds, false);
}

/* what a warm run measured: for people and later tools, and the run's range */
static void load_warm(const json_t *o, struct profile_warm *wm)
{
	memset(wm, 0, sizeof(*wm));
	if (!json_is_object(o))
		return;
	load_strbuf(o, "method", wm->method, sizeof(wm->method));
	load_num(o, "seconds", &wm->seconds, false);
	load_num(o, "first_read_s", &wm->first_read_s, false);
	load_num(o, "window_s", &wm->window_s, false);
	load_num(o, "bytes", &wm->bytes, false);
	load_num(o, "cpu_s", &wm->cpu_s, false);
	wm->epoch_seen = json_is_true(json_object_get(o, "epoch_seen"));
	wm->window_measured = json_is_true(json_object_get(o, "window_measured"));
	wm->exit_measured = json_is_true(json_object_get(o, "exit_measured"));
	load_strbuf(o, "exit_from", wm->exit_from, sizeof(wm->exit_from));
	wm->epoch2_seen = json_is_true(json_object_get(o, "epoch2_seen"));
	wm->runs = load_runs(o, 1);
	load_num(o, "rate_min_bps", &wm->rate_min, false);
	load_num(o, "rate_max_bps", &wm->rate_max, false);
}

/* what the predictor said: for people and later tools, not the model */
static void load_pred(const json_t *o, struct profile_inst *pi)
{
	struct profile_pred *pr = &pi->pred;
	const json_t *a, *v;
	size_t i;

	memset(pr, 0, sizeof(*pr));
	if (!json_is_object(o))
		return;
	load_strbuf(o, "graph", pi->m.graph, sizeof(pi->m.graph));
	load_num(o, "batch", &pi->m.batch, false);
	load_num(o, "sample_bytes", &pi->m.sample_bytes, false);
	load_num(o, "iteration_s", &pr->iteration_s, false);
	load_num(o, "bytes_per_iteration", &pr->bytes_per_iter, false);
	load_strbuf(o, "model", pr->model, sizeof(pr->model));
	load_strbuf(o, "trained_on", pr->trained_on, sizeof(pr->trained_on));
	load_num(o, "probe_ratio", &pr->probe_ratio, false);
	load_strbuf(o, "probe", pr->probe, sizeof(pr->probe));
	a = json_object_get(o, "warnings");
	json_array_foreach(a, i, v)
		if (json_is_string(v) && pr->nwarn < PROFILE_PRED_WARN)
			snprintf(pr->warn[pr->nwarn++], sizeof(pr->warn[0]), "%s",
				 json_string_value(v));
}

static int load_inst(const json_t *o, struct profile_inst *pi, int idx)
{
	struct model_inst *in = &pi->m;
	double epochs = 1, seed = idx + 1;
	const char *s;
	int err;

	profile_inst_default(in, idx);
	load_strbuf(o, "name", in->name, sizeof(in->name));
	load_strbuf(o, "rate_source", pi->rate_source, sizeof(pi->rate_source));
	err = load_num(o, "rate_bps", &in->rate, true);
	err = err ?: load_num(o, "epochs", &epochs, false);
	err = err ?: load_num(o, "seed", &seed, false);
	err = err ?: load_num(o, "window_bytes", &in->window, false);
	err = err ?: load_num(o, "cpu_s_per_byte", &in->cpu_per_byte, false);
	err = err ?: load_num(o, "mem_bytes", &in->mem, false);
	err = err ?: load_num(o, "startup_s", &in->startup, false);
	err = err ?: load_num(o, "startup_cpu_s", &in->startup_cpu, false);
	err = err ?: load_num(o, "epoch_gap_s", &in->epoch_gap, false);
	err = err ?: load_num(o, "streams", &in->streams, false);
	err = err ?: load_num(o, "exit_s", &in->exit, false);
	err = err ?: load_num(o, "cpu_task_s_per_byte", &in->cpu_task_per_byte, false);
	if (err)
		return err;
	if (epochs < 0 || seed < 0 || !(in->startup >= 0) || !(in->startup_cpu >= 0) ||
	    !(in->epoch_gap >= 0) || !(in->streams >= 0) || !(in->exit >= 0) ||
	    !(in->cpu_task_per_byte >= 0))
		return -EINVAL;
	load_warm(json_object_get(o, "warm_run"), &pi->warm);
	load_pred(json_object_get(o, "predictor"), pi);
	in->epochs = epochs;
	in->seed = seed;
	if (!tjson_get_str(o, "order", &s) && model_order_parse(s, &in->order))
		return -EINVAL;
	if (!tjson_get_str(o, "cmd", &s)) {
		pi->cmd = strdup(s);
		if (!pi->cmd)
			return -ENOMEM;
	}
	return 0;
}

static int load_doc(const json_t *doc, struct profile *p, char *err, size_t errlen)
{
	const json_t *insts = json_object_get(doc, "instances"), *c;
	double version = 0, ncpu = 0, contention = 0;
	size_t i;
	int ret;

	if (tjson_get_num(doc, "tandem_profile", &version) || version != PROFILE_VERSION) {
		snprintf(err, errlen, "not a version %d tandem profile", PROFILE_VERSION);
		return -EINVAL;
	}
	load_strbuf(doc, "created", p->created, sizeof(p->created));
	load_num(doc, "calibration_seconds", &p->calib_seconds, false);
	load_num(doc, "storage_seconds", &p->storage_seconds, false);
	load_num(doc, "warmup_seconds", &p->warmup_seconds, false);
	if ((ret = load_dataset(json_object_get(doc, "dataset"), p)) ||
	    (ret = load_storage(json_object_get(doc, "storage"), p)) ||
	    (ret = load_memory(json_object_get(doc, "memory"), p))) {
		snprintf(err, errlen, "missing or bad dataset/storage/memory fields");
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	load_num(json_object_get(doc, "host"), "cpus", &ncpu, false);
	p->ncpu = ncpu;
	load_num(json_object_get(doc, "host"), "cpu_contention", &contention, false);
	if (!(contention >= 0) || contention > 10) {
		snprintf(err, errlen, "host.cpu_contention %g: not in [0, 10]", contention);
		return -EINVAL;
	}
	p->cpu_contention = contention;
	load_contention(json_object_get(json_object_get(doc, "host"), "contention"),
			&p->contention);
	json_array_foreach(insts, i, c) {
		if (p->ninst == MODEL_MAX_INST)
			break;
		ret = load_inst(c, &p->inst[p->ninst], p->ninst);
		p->ninst++;
		if (ret) {
			snprintf(err, errlen, "instance %d: missing or bad fields", p->ninst - 1);
			return ret == -ENOMEM ? ret : -EINVAL;
		}
	}
	return 0;
}

int profile_load(const char *path, struct profile *p, char *err, size_t errlen)
{
	json_t *doc;
	int ret;

	profile_init(p);
	ret = tjson_load_file(path, &doc, err, errlen);
	if (ret)
		return ret;
	ret = load_doc(doc, p, err, errlen);
	json_decref(doc);
	if (ret)
		profile_free(p);
	return ret;
}

/* ---- model input ---- */

void model_args_init(struct model_args *a)
{
	memset(a, 0, sizeof(*a));
	a->cache = -1;
	a->cxl_cache = -1;
	a->ncpu = -1;
	a->cpu_contention = -1;
	a->steer = -1;
	a->evict = -1;
	/*
	 * Without steering the page cache still spills to the CPU-less node:
	 * the allocator falls back to it when node 0 is at its watermark
	 * (Documentation/validation.md, nodram: 237 MiB of a 400 MiB dataset
	 * on node 0, 163 MiB on node 1, all of it cached).
	 */
	a->nosteer_frac = 1;
	/*
	 * With steering the dataset fills the CXL node and the rest stays in
	 * DRAM: tandem.ko pauses a dataset's steering while the target reclaims
	 * its pages (validation.md, nodram-steer; before that pause, 0 was
	 * measured: the dataset evicted itself on the CXL node).
	 */
	a->steer_dram_frac = 1;
}

int model_args_add_instance(struct model_args *a, const char *spec, char *err, size_t errlen)
{
	int ret;

	if (a->nspec == MODEL_MAX_INST) {
		snprintf(err, errlen, "more than %d instances", MODEL_MAX_INST);
		return -E2BIG;
	}
	profile_inst_default(&a->spec[a->nspec], a->nspec);
	ret = profile_inst_parse(spec, &a->spec[a->nspec], err, errlen);
	if (ret)
		return ret;
	a->spec_str[a->nspec++] = spec;
	return 0;
}

int model_args_parse_rates(const char *list, double *out, int max, int *n)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == max)
			err = -E2BIG;
		else
			err = units_parse_rate(tok, &out[(*n)++]);
	}
	free(copy);
	return *n ? err : -EINVAL;
}

int model_args_parse_bw(struct model_args *a, const char *list)
{
	return model_args_parse_rates(list, a->bw, MODEL_MAX_BW, &a->nbw);
}

bool model_args_steer(const struct model_args *a, const struct profile *p)
{
	double cxl = a->cxl_cache >= 0 ? a->cxl_cache : p->cache_cxl;

	return a->steer >= 0 ? a->steer : cxl > 0;
}

static uint32_t default_extents(uint64_t files)
{
	/* one extent per file keeps the granularity of real reads; cap the cost */
	if (!files)
		return 512;
	return files < 64 ? 64 : files > 1024 ? 1024 : files;
}

static int build_sys(const struct model_args *a, const struct profile *p,
		     struct model_sys *sys, char *err, size_t errlen)
{
	double cxl = a->cxl_cache >= 0 ? a->cxl_cache : p->cache_cxl, dram;
	bool steer = model_args_steer(a, p);

	memset(sys, 0, sizeof(*sys));
	sys->dataset = a->dataset > 0 ? a->dataset : p->dataset_bytes;
	dram = a->cache >= 0 ? a->cache : p->cache_dram;
	sys->cache = steer ? a->steer_dram_frac * dram + cxl : dram + a->nosteer_frac * cxl;
	if (a->cache < 0 && !p->cache_dram && !cxl) {
		snprintf(err, errlen, "no cache size: give --profile or --cache");
		return -EINVAL;
	}
	sys->nbw = a->nbw ? a->nbw : p->nbw;
	memcpy(sys->bw, a->nbw ? a->bw : p->bw, sizeof(sys->bw));
	if (a->eta > 0 && sys->nbw >= 1) {
		sys->bw[1] = a->eta * sys->bw[0];
		sys->nbw = 2;
	}
	sys->ncpu = a->ncpu >= 0 ? a->ncpu : p->ncpu;
	sys->cpu_contention = a->cpu_contention >= 0 ? a->cpu_contention : p->cpu_contention;
	sys->evict = a->evict >= 0 ? a->evict : MODEL_EVICT_RANDOM;
	sys->warm = a->warm;
	sys->extents = a->extents ? a->extents : default_extents(p->files);
	sys->same_seed = 0x5a3e;
	if (!(sys->dataset > 0) || sys->nbw < 1) {
		snprintf(err, errlen, "need the dataset size and B(1): give --profile or --dataset-size and --bw");
		return -EINVAL;
	}
	return 0;
}

int model_args_build(const struct model_args *a, const struct profile *p,
		     struct model_sys *sys, struct model_inst *inst, int *n,
		     char *err, size_t errlen)
{
	int have = a->nspec > p->ninst ? a->nspec : p->ninst, want;
	int ret = build_sys(a, p, sys, err, errlen);

	if (ret)
		return ret;
	for (int i = 0; i < a->nspec; i++)
		if (a->spec[i].graph[0]) {
			snprintf(err, errlen, "instance %s: graph= is calibrate's (it puts the predicted "
				 "rate into the profile: calibrate --instance ...,graph=FILE,batch=B)",
				 a->spec[i].name);
			return -EINVAL;
		}
	want = a->ninstances > have ? a->ninstances : have;
	if (!have || want > MODEL_MAX_INST) {
		snprintf(err, errlen, "need 1 to %d instances (--instance or a profile with instances)",
			 MODEL_MAX_INST);
		return -EINVAL;
	}
	for (int i = 0; i < want; i++) {
		if (i < have && i < a->nspec && i < p->ninst && a->spec_str[i]) {
			/* keys given on the command line override the profile's */
			inst[i] = p->inst[i].m;
			ret = profile_inst_parse(a->spec_str[i], &inst[i], err, errlen);
			if (ret)
				return ret;
			continue;
		}
		if (i < have) {
			inst[i] = i < a->nspec ? a->spec[i] : p->inst[i].m;
			continue;
		}
		/* replicas: same job, own name and (for indep) own shuffle */
		inst[i] = inst[have - 1];
		snprintf(inst[i].name, sizeof(inst[i].name), "%c%d", inst[have - 1].name[0], i);
		inst[i].seed = inst[have - 1].seed + (i - have + 1);
	}
	for (int i = 0; i < a->nrate && i < want; i++)
		inst[i].rate = a->rate[i];
	if (a->exactly > want) {
		snprintf(err, errlen, "fewer instances than commands");
		return -EINVAL;
	}
	*n = a->exactly > 0 ? a->exactly : want;
	return 0;
}

int model_set_new(const struct model_args *a, const struct profile *p, bool want_alt,
		  struct model_set *s, char *err, size_t errlen)
{
	struct model_inst inst[MODEL_MAX_INST];
	struct model_args off = *a;
	struct model_sys sys;
	int n, ret;

	memset(s, 0, sizeof(*s));
	s->steer = model_args_steer(a, p);
	ret = model_args_build(a, p, &s->sys, s->inst, &s->n, err, errlen);
	ret = ret ?: model_new(&s->sys, s->inst, s->n, &s->m, err, errlen);
	if (ret || !want_alt || !s->steer)
		return ret;
	off.steer = 0;
	if (model_args_build(&off, p, &sys, inst, &n, err, errlen) ||
	    model_new(&sys, inst, n, &s->alt, err, errlen))
		s->alt = NULL;
	return 0;
}

void model_set_free(struct model_set *s)
{
	model_free(s->alt);
	model_free(s->m);
	s->m = s->alt = NULL;
}
