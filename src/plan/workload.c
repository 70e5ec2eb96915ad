#include "plan/workload.h"

#include <string.h>

/* Copy src[n] into dst[cap], cut at cap - 1 bytes; true when cut. */
static bool copy_cut(char *dst, size_t cap, const char *src, size_t n)
{
	bool cut = n > cap - 1;
	if (cut)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return cut;
}

void plan_workload_init(struct plan_workload *w, const char *source)
{
	memset(w, 0, sizeof *w);
	w->source = source;
}

void plan_workload_add(struct plan_workload *w, const char *method, const char *target,
		       size_t target_len, uint64_t body_bytes, const char *name)
{
	if (!method)
		method = "GET";
	char m[PLAN_WL_METHOD_CAP];
	copy_cut(m, sizeof m, method, strlen(method));
	w->requests++;
	size_t i = 0;
	while (i < w->n_methods && strcmp(w->methods[i].method, m) != 0)
		i++;
	if (i < w->n_methods) {
		w->methods[i].requests++;
	} else if (w->n_methods < PLAN_WL_MAX_METHODS) {
		memcpy(w->methods[w->n_methods].method, m, sizeof m);
		w->methods[w->n_methods++].requests = 1;
	} else {
		w->other_method_requests++;
	}
	if (name && *name) {
		char n[PLAN_WL_NAME_CAP];
		copy_cut(n, sizeof n, name, strlen(name));
		size_t k = 0;
		while (k < w->n_names && strcmp(w->names[k].name, n) != 0)
			k++;
		if (k < w->n_names) {
			w->names[k].requests++;
		} else if (w->n_names < PLAN_WL_MAX_NAMES) {
			memcpy(w->names[w->n_names].name, n, sizeof n);
			w->names[w->n_names++].requests = 1;
		} else {
			w->other_name_requests++;
		}
	} else {
		w->unnamed++;
	}
	if (body_bytes) {
		if (!w->with_body || body_bytes < w->body_bytes_min)
			w->body_bytes_min = body_bytes;
		if (body_bytes > w->body_bytes_max)
			w->body_bytes_max = body_bytes;
		w->with_body++;
		w->body_bytes_total += body_bytes;
	}
	if (w->n_listed < PLAN_WL_MAX_LISTED) {
		struct plan_wl_request *r = &w->listed[w->n_listed++];
		memcpy(r->method, m, sizeof m);
		r->target_cut = copy_cut(r->target, sizeof r->target, target ? target : "",
					 target ? target_len : 0);
		r->body_bytes = body_bytes;
		copy_cut(r->name, sizeof r->name, name ? name : "", name ? strlen(name) : 0);
	}
}

void plan_workload_finish(struct plan_workload *w)
{
	/* insertion sorts, stable: at most 16 entries each */
	for (size_t i = 1; i < w->n_methods; i++)
		for (size_t j = i; j > 0 && w->methods[j].requests > w->methods[j - 1].requests; j--) {
			struct plan_wl_method t = w->methods[j];
			w->methods[j] = w->methods[j - 1];
			w->methods[j - 1] = t;
		}
	for (size_t i = 1; i < w->n_names; i++)
		for (size_t j = i; j > 0 && w->names[j].requests > w->names[j - 1].requests; j--) {
			struct plan_wl_name t = w->names[j];
			w->names[j] = w->names[j - 1];
			w->names[j - 1] = t;
		}
}

const char *plan_workload_method(const struct plan_workload *w)
{
	if (w->n_methods != 1 || w->other_method_requests)
		return NULL;
	return w->methods[0].method;
}

bool plan_workload_body_bytes(const struct plan_workload *w, uint64_t *bytes)
{
	if (!w->with_body) {
		*bytes = 0;
		return true;
	}
	if (w->with_body == w->requests && w->body_bytes_min == w->body_bytes_max) {
		*bytes = w->body_bytes_min;
		return true;
	}
	return false;
}
