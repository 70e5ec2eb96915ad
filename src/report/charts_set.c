/* pacer — the set of charts a report draws (charts_build in charts.c fills
 * it), and the growable point arrays the chart families share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/charts_int.h"
#include "report/render_int.h"

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
