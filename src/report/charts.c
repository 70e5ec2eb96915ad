/* pacer — which charts a result gets, and their data (drawn by svg.c).
 *
 *   spectrum         latency and service time percentile spectrum, log
 *                    1/(1-p) axis (run: measure; ramp: the focus step)
 *   histogram        latency distribution: the share of requests in each of
 *                    10 log-spaced bins a decade (beside the spectrum)
 *   status           responses per second by status class, and the requests
 *                    that failed on the connection and the connects that
 *                    failed, per second (results whose series carry
 *                    by_class), drain seconds apart
 *   timeline         responses/s and p50/p99 per second, and the requests
 *                    unsent at each second's end when any were (ramp: all
 *                    steps end to end with step boundaries, or per-step
 *                    points)
 *   latency-vs-load  ramp: p50/p99 against offered rate with the SLO line;
 *                    achieved against offered below
 *   compare-ratios   compare: each variant's ratio to the baseline with its
 *                    95 % interval
 *   compare-latency  compare: median latency percentiles per variant with
 *                    min-max whiskers
 *   compare-throughput  compare: median throughput (or capacity) per variant
 *
 * This file holds the set and its shared helpers (charts_int.h); the
 * families are charts_phase.c (spectrum, histogram, timeline, status),
 * charts_ramp.c and charts_compare.c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/charts_int.h"
#include "report/render_int.h"
#include "report/svg.h"
#include "stats/hist.h"

void charts_free(struct chart_set *cs)
{
	for (size_t i = 0; i < cs->n; i++)
		free(cs->c[i].svg);
	memset(cs, 0, sizeof *cs);
}

const struct chart *charts_find(const struct chart_set *cs, const char *name)
{
	for (size_t i = 0; i < cs->n; i++)
		if (strcmp(cs->c[i].name, name) == 0)
			return &cs->c[i];
	return NULL;
}

/* Adds svg (taking it) under name. A NULL svg (nothing drawable) adds nothing. */
void chart_add(struct chart_set *cs, const char *name, const char *title, char *svg)
{
	if (!svg)
		return;
	if (cs->n == CHART_MAX) {
		free(svg);
		return;
	}
	struct chart *c = &cs->c[cs->n++];
	snprintf(c->name, sizeof c->name, "%s", name);
	snprintf(c->title, sizeof c->title, "%s", title);
	c->svg = svg;
}



void xy_push(struct xy *a, double x, double y)
{
	if (a->oom)
		return;
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;
		double *nx = realloc(a->x, nc * sizeof *nx);
		if (!nx) {
			a->oom = true;
			return;
		}
		a->x = nx;
		double *ny = realloc(a->y, nc * sizeof *ny);
		if (!ny) {
			a->oom = true;
			return;
		}
		a->y = ny;
		a->cap = nc;
	}
	a->x[a->n] = x;
	a->y[a->n] = y;
	a->n++;
}

void xy_free(struct xy *a)
{
	free(a->x);
	free(a->y);
	memset(a, 0, sizeof *a);
}

int charts_build(const struct loaded_result *r, struct chart_set *cs)
{
	memset(cs, 0, sizeof *cs);
	int rc = 0;
	switch (r->kind) {
	case RESULT_KIND_RUN: rc = run_charts(r->root, cs); break;
	case RESULT_KIND_RAMP: rc = ramp_charts(r->root, cs); break;
	case RESULT_KIND_COMPARE: rc = compare_charts(r->root, cs); break;
	}
	if (rc)
		charts_free(cs);
	return rc;
}
