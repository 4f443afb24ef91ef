// SPDX-License-Identifier: GPL-2.0
/*
 * Ernest (Venkataraman et al., NSDI 2016): T = th0 + th1*scale/m + th2*m +
 * th3*log(m) with th >= 0, fitted by non-negative least squares
 * (Lawson & Hanson 1974, algorithm NNLS).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NNLS_MAX_N 16

/* Least squares on the columns in `set`: normal equations solved by
 * Gaussian elimination with partial pivoting; a (near) dependent column
 * gets z = 0 instead of a huge value. z [n]. */
static void ls_subset(const double *a, const double *b, int m, int n, const bool *set,
		      double *z)
{
	double g[NNLS_MAX_N][NNLS_MAX_N + 1] = { { 0 } }, scale = 0;
	int idx[NNLS_MAX_N], k = 0;

	for (int j = 0; j < n; j++) {
		z[j] = 0;
		if (set[j])
			idx[k++] = j;
	}
	for (int r = 0; r < k; r++) {
		for (int c = 0; c < k; c++)
			for (int i = 0; i < m; i++)
				g[r][c] += a[i * n + idx[r]] * a[i * n + idx[c]];
		for (int i = 0; i < m; i++)
			g[r][k] += a[i * n + idx[r]] * b[i];
		scale = fmax(scale, g[r][r]);
	}
	for (int c = 0; c < k; c++) {
		int p = c;

		for (int r = c + 1; r < k; r++)
			if (fabs(g[r][c]) > fabs(g[p][c]))
				p = r;
		for (int q = 0; q <= k; q++) {
			double t = g[c][q];

			g[c][q] = g[p][q];
			g[p][q] = t;
		}
		if (fabs(g[c][c]) <= 1e-12 * scale) {
			g[c][c] = 0;	/* dependent column: leave it at 0 */
			continue;
		}
		for (int r = 0; r < k; r++) {
			double f = r == c ? 0 : g[r][c] / g[c][c];

			for (int q = c; q <= k; q++)
				g[r][q] -= f * g[c][q];
		}
	}
	for (int c = 0; c < k; c++)
		z[idx[c]] = g[c][c] ? g[c][k] / g[c][c] : 0;
}

/* w [n] = A^T (b - A x) */
static void gradient(const double *a, const double *b, int m, int n, const double *x, double *w)
{
	for (int j = 0; j < n; j++)
		w[j] = 0;
	for (int i = 0; i < m; i++) {
		double r = b[i];

		for (int j = 0; j < n; j++)
			r -= a[i * n + j] * x[j];
		for (int j = 0; j < n; j++)
			w[j] += a[i * n + j] * r;
	}
}

/* Inner loop: move from x toward the unconstrained solution z on the
 * passive set, dropping variables that would turn negative. */
static void nnls_inner(const double *a, const double *b, int m, int n, bool *set, double *x)
{
	double z[NNLS_MAX_N];

	for (int iter = 0; iter < 3 * n; iter++) {
		double alpha = 1;
		bool feasible = true;

		ls_subset(a, b, m, n, set, z);
		for (int j = 0; j < n; j++)
			if (set[j] && z[j] <= 0) {
				feasible = false;
				if (x[j] - z[j] > 0)
					alpha = fmin(alpha, x[j] / (x[j] - z[j]));
			}
		if (feasible) {
			memcpy(x, z, n * sizeof(*x));
			return;
		}
		for (int j = 0; j < n; j++) {
			x[j] += alpha * (z[j] - x[j]);
			if (set[j] && x[j] <= 1e-15) {
				set[j] = false;
				x[j] = 0;
			}
		}
	}
}

int tp_nnls(const double *a, const double *b, int m, int n, double *x)
{
	double w[NNLS_MAX_N], wmax = 0, tol;
	bool set[NNLS_MAX_N] = { false };

	if (n < 1 || n > NNLS_MAX_N || m < 1)
		return tp_fail(-EINVAL, "nnls: %d x %d problem not supported", m, n);
	for (int j = 0; j < n; j++)
		x[j] = 0;
	gradient(a, b, m, n, x, w);
	for (int j = 0; j < n; j++)
		wmax = fmax(wmax, fabs(w[j]));
	tol = 1e-10 * (wmax > 0 ? wmax : 1);
	for (int outer = 0; outer < 3 * n; outer++) {
		int t = -1;

		for (int j = 0; j < n; j++)
			if (!set[j] && w[j] > tol && (t < 0 || w[j] > w[t]))
				t = j;
		if (t < 0)
			return 0;
		set[t] = true;
		nnls_inner(a, b, m, n, set, x);
		gradient(a, b, m, n, x, w);
	}
	return 0;
}

static void ernest_row(double scale, double machines, double *row)
{
	row[0] = 1;
	row[1] = scale / machines;
	row[2] = machines;
	row[3] = log(machines);
}

int tp_ernest_fit(const double *scale, const double *machines, const double *t, int n,
		  double theta[4])
{
	double *a = malloc(n * 4 * sizeof(*a));
	int err;

	if (!a)
		return tp_fail(-ENOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		ernest_row(scale[i], machines[i] > 0 ? machines[i] : 1, a + 4 * i);
	err = tp_nnls(a, t, n, 4, theta);
	free(a);
	return err;
}

double tp_ernest_predict(const double theta[4], double scale, double machines)
{
	double row[4], t = 0;

	ernest_row(scale, machines > 0 ? machines : 1, row);
	for (int j = 0; j < 4; j++)
		t += theta[j] * row[j];
	return t;
}
