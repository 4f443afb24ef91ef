// SPDX-License-Identifier: GPL-2.0
/* Model evaluation for the CLI: grid, search, output and plot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "model/model.h"

void mo_grid_delta(double x, int n, double *delta)
{
	for (int k = 0; k < n; k++)
		delta[k] = x >= 0 ? k * x : (n - 1 - k) * -x;
}

/* 1, 2 or 5 times a power of ten, at least raw */
double mo_nice_step(double raw)
{
	double p, f;

	if (!(raw > 0))
		return 1;
	p = pow(10, floor(log10(raw)));
	f = raw / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

int mo_solo_all(struct model *m, struct mo_report *r, double *horizon)
{
	int err;

	r->n = model_ninst(m);
	*horizon = 0;
	for (int i = 0; i < r->n; i++) {
		err = model_solo(m, i, &r->solo[i]);
		if (err)
			return err;
		*horizon = fmax(*horizon, r->solo[i]);
	}
	return 0;
}

int mo_eval_grid(struct model *m, struct mo_report *r)
{
	double delta[MODEL_MAX_INST];
	struct model_result res;
	int err;

	r->mk = calloc(r->nx, sizeof(double));
	r->ends = calloc((size_t)r->nx * r->n, sizeof(double));
	if (!r->mk || !r->ends)
		return -ENOMEM;
	for (int g = 0; g < r->nx; g++) {
		mo_grid_delta(r->xs[g], r->n, delta);
		err = model_eval(m, delta, &res);
		if (err)
			return err;
		r->mk[g] = res.makespan;
		for (int i = 0; i < r->n; i++)
			r->ends[(size_t)g * r->n + i] = res.inst[i].end;
	}
	return 0;
}

/* CPU time of this process: the search's cost without the neighbours' load */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int mo_search(struct model *m, struct mo_report *r, unsigned grid, double min_gain)
{
	struct model_search opt = { .grid = grid };
	double zero[MODEL_MAX_INST] = { 0 }, t0 = now_s(), c0 = cpu_s();
	uint64_t ev0 = model_events(m);
	struct model_result res;
	int err;

	r->n = model_ninst(m);
	err = model_best(m, &opt, r->best, &r->best_m, &r->evals);
	r->search_events = model_events(m) - ev0;
	r->search_ms = (now_s() - t0) * 1e3;
	r->search_cpu_ms = (cpu_s() - c0) * 1e3;
	err = err ?: model_eval(m, zero, &res);
	if (err)
		return err;
	r->searched = true;
	r->m0 = res.makespan;
	r->gain = r->m0 > 0 ? (r->m0 - r->best_m) / r->m0 : 0;
	/* within the model's error, starting together is the honest advice */
	r->together = r->gain < min_gain;
	memcpy(r->chosen, r->together ? zero : r->best, sizeof(r->chosen));
	err = model_eval(m, r->chosen, &r->chosen_res);
	r->chosen_m = r->chosen_res.makespan;
	return err;
}

static void print_input(const struct model *m, const struct profile *p)
{
	const struct model_sys *s = model_sys_of(m);
	char b1[32], b2[32];

	out_obj_open("input");
	out_double("dataset_bytes", NULL, s->dataset);
	out_text("dataset %s in ", units_fmt_size(s->dataset, b1, sizeof(b1)));
	out_u64("extents", "%llu extents\n", model_extents(m));
	out_double("cache_bytes", NULL, s->cache);
	out_text("cache %s (%u extents; DRAM %s", units_fmt_size(s->cache, b1, sizeof(b1)),
		 model_cache_extents(m), units_fmt_size(p->cache_dram, b2, sizeof(b2)));
	out_text(" + CXL %s in the profile), evict %s%s\n",
		 units_fmt_size(p->cache_cxl, b1, sizeof(b1)), model_evict_name(s->evict),
		 s->warm ? ", warm" : "");
	out_str("evict", NULL, model_evict_name(s->evict));
	out_bool("warm", NULL, s->warm);
	out_arr_open("bandwidth_bps");
	for (int k = 0; k < s->nbw; k++) {
		out_double(NULL, NULL, s->bw[k]);
		out_text("%sB(%d) = %s", k ? ", " : "storage ", k + 1,
			 units_fmt_rate(s->bw[k], b1, sizeof(b1)));
	}
	out_arr_close();
	out_text(s->nbw > 1 ? " (eta %.2f)\n" : "\n", s->nbw > 1 ? s->bw[1] / s->bw[0] : 0);
	out_obj_close();
}

static void print_instances(const struct model *m, const struct mo_report *r)
{
	char b[32];

	out_arr_open("instances");
	for (int i = 0; i < r->n; i++) {
		const struct model_inst *in = model_inst_of(m, i);

		out_obj_open(NULL);
		out_str("name", "  %-6s", in->name);
		out_double("rate_bps", NULL, in->rate);
		out_text(" rate %s", units_fmt_rate(in->rate, b, sizeof(b)));
		out_u64("epochs", "  epochs %llu", in->epochs);
		out_str("order", "  order %s", model_order_name(in->order));
		out_double("solo_s", "  solo %.2f s\n", r->solo[i]);
		out_obj_close();
	}
	out_arr_close();
}

static void print_grid(const struct mo_report *r)
{
	out_text("stagger_s  makespan_s  (instance k released at k*stagger)\n");
	out_arr_open("grid");
	for (int g = 0; g < r->nx; g++) {
		out_obj_open(NULL);
		out_double("stagger_s", "%9.2f", r->xs[g]);
		out_double("makespan_s", "  %10.2f", r->mk[g]);
		out_arr_open("end_s");
		for (int i = 0; i < r->n; i++)
			out_double(NULL, "  %7.2f", r->ends[(size_t)g * r->n + i]);
		out_arr_close();
		out_text("\n");
		out_obj_close();
	}
	out_arr_close();
}

static void print_vector(const char *key, const char *label, const double *d, int n)
{
	out_text("%s [", label);
	out_arr_open(key);
	for (int i = 0; i < n; i++)
		out_double(NULL, i ? ", %.2f" : "%.2f", d[i]);
	out_arr_close();
	out_text("] s");
}

static void print_best(const struct mo_report *r)
{
	out_obj_open("best");
	print_vector("delta_s", "best release", r->best, r->n);
	out_double("makespan_s", ": M = %.2f s", r->best_m);
	out_double("simultaneous_s", "; simultaneous start M = %.2f s", r->m0);
	out_double("gain", NULL, r->gain);	/* a fraction of M(0), as everywhere */
	out_text(" (gain %.1f%%)\n", r->gain * 100);
	out_bool("together", NULL, r->together);
	out_str("advice", "advice: %s\n", r->together ?
		"start together: staggering gains less than the model's error" :
		"stagger: release the instances at the best vector");
	print_vector("chosen_s", "chosen release", r->chosen, r->n);
	out_double("chosen_makespan_s", ": predicted M = %.2f s\n", r->chosen_m);
	out_u64("evals", "search: %llu simulations", r->evals);
	out_u64("search_events", " (%llu events)", r->search_events);
	out_double("search_ms", " in %.1f ms", r->search_ms);
	out_double("search_cpu_ms", " (%.1f ms CPU)\n", r->search_cpu_ms);
	out_obj_close();
}

static void print_alt(const struct model *m, const struct model *alt_m,
		      const struct mo_report *r, const struct mo_report *alt)
{
	char b[32];
	double gain;

	out_obj_open("without_steering");
	out_double("cache_bytes", NULL, model_sys_of(alt_m)->cache);
	out_text("without CXL steering (cache %s): ",
		 units_fmt_size(model_sys_of(alt_m)->cache, b, sizeof(b)));
	print_vector("delta_s", "best release", alt->best, alt->n);
	out_double("makespan_s", ": M = %.2f s", alt->best_m);
	out_double("simultaneous_s", ", simultaneous %.2f s", alt->m0);
	gain = alt->best_m > 0 ? (alt->best_m - r->best_m) / alt->best_m : 0;
	out_double("steering_gain", NULL, gain);
	if (gain >= 0)
		out_text("; steering saves %.1f%%\n", gain * 100);
	else
		out_text("; steering costs %.1f%%: the dataset does not fit the CXL node and "
			 "would evict itself there\n", -gain * 100);
	out_obj_close();
	(void)m;
}

void mo_print(const struct model *m, const struct profile *p, const struct mo_report *r,
	      const struct model *alt_m, const struct mo_report *alt)
{
	out_obj_open(NULL);
	print_input(m, p);
	print_instances(m, r);
	if (r->nx)
		print_grid(r);
	if (r->searched)
		print_best(r);
	if (alt && alt->searched)
		print_alt(m, alt_m, r, alt);
	out_obj_close();
}

static int write_data(char *path, const struct mo_report *r)
{
	int fd = mkstemp(path);
	FILE *f;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -errno;
	}
	for (int g = 0; g < r->nx; g++)
		fprintf(f, "%.6f,%.6f\n", r->xs[g], r->mk[g]);
	return fclose(f) ? -errno : 0;
}

static int run_gnuplot(const char *script)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		ctl_err("gnuplot not found (apt-get install gnuplot-nox)");
		return -ENOENT;
	}
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

static void write_script(FILE *f, const char *path, const char *data,
			 const char *measured, const struct mo_report *r)
{
	const char *ext = strrchr(path, '.');
	bool png = ext && !strcmp(ext, ".png");

	fprintf(f, "set terminal %s size 800,500\n", png ? "pngcairo" : "svg");
	fprintf(f, "set output '%s'\n", path);
	fprintf(f, "set xlabel '%s'\nset ylabel 'makespan (s)'\nset grid\n",
		r->n == 2 ? "stagger: release of the second instance (s)" :
		"stagger: instance k released at k*x (s)");
	fprintf(f, "set key below\nset datafile separator comma\n");
	fprintf(f, "plot '%s' using 1:2 with linespoints lw 2 title 'model M(delta)'", data);
	if (r->searched && r->n == 2)
		fprintf(f, ", '-' using 1:2 with points pt 7 ps 2 title 'model best'");
	if (measured)
		fprintf(f, ", '%s' using 1:2 with points pt 5 ps 1.5 title 'measured'",
			measured);
	fprintf(f, "\n");
	if (r->searched && r->n == 2)
		fprintf(f, "%.6f,%.6f\ne\n", r->best[1] > 0 ? r->best[1] : -r->best[0],
			r->best_m);
}

int mo_plot(const char *path, const char *measured, const struct model *m,
	    const struct mo_report *r)
{
	char data[] = "/tmp/tandem-plot-XXXXXX", script[] = "/tmp/tandem-gp-XXXXXX";
	int fd, err;
	FILE *f;

	(void)m;
	if (strchr(path, '\'') || (measured && strchr(measured, '\'')))
		return ctl_err("plot: file names with quotes are not supported"), -EINVAL;
	err = write_data(data, r);
	if (err)
		return ctl_err("plot: %s", strerror(-err)), err;
	fd = mkstemp(script);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		goto unlink_data;
	}
	write_script(f, path, data, measured, r);
	err = fclose(f) ? -errno : 0;
	err = err ?: run_gnuplot(script);
	unlink(script);
unlink_data:
	unlink(data);
	if (err && err != -ENOENT)
		ctl_err("plot: gnuplot failed to write %s", path);
	return err;
}

void mo_report_free(struct mo_report *r)
{
	free(r->xs);
	free(r->mk);
	free(r->ends);
	memset(r, 0, sizeof(*r));
}
