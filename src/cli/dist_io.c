/* pacer — the segments' side of a distributed run in the CLI (see
 * dist_io.h). */
#include "cli/dist_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/report_io.h"
#include "cli/signals.h"
#include "dist/dist.h"
#include "dist/frame.h"
#include "doc/keys.h"
#include "doc/read.h"
#include "doc/merge.h"
#include "util/afile.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/time_units.h"
#include "util/timestamp.h"
#include "util/units.h"

void cli_dist_defaults(struct cli_dist *d)
{
	memset(d, 0, sizeof *d);
	d->timeout_ns = 300 * NS_PER_S;
	d->margin_ns = 3 * NS_PER_S;
	d->handin_ns = 120 * NS_PER_S;
	d->merged_out = "-";
}

/* HOST[:PORT] or [V6]:PORT into d->host and d->port. */
static bool parse_peer(const char *arg, struct cli_dist *d)
{
	const char *host = arg, *port = NULL;
	size_t hl;
	if (arg[0] == '[') {
		const char *rb = strchr(arg, ']');
		if (!rb || (rb[1] && rb[1] != ':'))
			return false;
		host = arg + 1;
		hl = (size_t)(rb - host);
		port = rb[1] ? rb + 2 : NULL;
	} else {
		const char *colon = strchr(arg, ':');
		if (colon && strchr(colon + 1, ':'))
			return false; /* an IPv6 address wants brackets */
		hl = colon ? (size_t)(colon - arg) : strlen(arg);
		port = colon ? colon + 1 : NULL;
	}
	if (hl < 1 || hl >= sizeof d->host)
		return false;
	memcpy(d->host, host, hl);
	d->host[hl] = '\0';
	d->port = WIRE_PORT;
	if (port) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(port, &end, 10);
		if (errno || end == port || *end || v < 1 || v > 65535)
			return false;
		d->port = (uint16_t)v;
	}
	for (const char *c = d->host; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == '/' || *c == '@')
			return false;
	return true;
}

int cli_dist_apply(const char *cmd, struct cli_dist *d, const struct run_plan *p,
		   const struct opt *tab, size_t n, int argc, char **argv)
{
	if (d->framed && !p->out_path) {
		fprintf(stderr, "pacer %s: --framed frames the result --out writes: give --out FILE "
				"(- for stdout)\n",
			cmd);
		return EXIT_USAGE;
	}
	if (!d->barrier) {
		static const char *const only[] = {"barrier-margin", "barrier-timeout",
						   "handin-timeout", "merged-out"};
		for (size_t i = 0; i < sizeof only / sizeof only[0]; i++)
			if (opts_given(tab, n, only[i])) {
				fprintf(stderr, "pacer %s: --%s is for --barrier\n", cmd, only[i]);
				return EXIT_USAGE;
			}
		return 0;
	}
	if (p->segments < 2) {
		fprintf(stderr, "pacer %s: --barrier starts the segments of one plan together: give "
				"--segment K/N\n",
			cmd);
		return EXIT_USAGE;
	}
	if (p->start_at_wall_ns) {
		fprintf(stderr, "pacer %s: --barrier and --start-at both set the start: give one "
				"(--start-at where the segments cannot reach each other)\n",
			cmd);
		return EXIT_USAGE;
	}
	if (!parse_peer(d->barrier, d)) {
		fprintf(stderr, "pacer %s: --barrier '%s': expected HOST[:PORT] (segment 0's name, "
				"e.g. pacer-x-0.pacer-x:7450)\n",
			cmd, d->barrier);
		return EXIT_USAGE;
	}
	if (d->margin_ns < 100 * NS_PER_MS || d->margin_ns > 3600 * NS_PER_S) {
		fprintf(stderr, "pacer %s: --barrier-margin: from 100ms to 1h\n", cmd);
		return EXIT_USAGE;
	}
	if (d->timeout_ns < 100 * NS_PER_MS || d->handin_ns < 100 * NS_PER_MS) {
		fprintf(stderr, "pacer %s: --barrier-timeout and --handin-timeout: at least 100ms\n",
			cmd);
		return EXIT_USAGE;
	}
	d->secret = getenv("PACER_BARRIER_TOKEN");
	if (!d->secret || !d->secret[0]) {
		fprintf(stderr, "pacer %s: --barrier: set PACER_BARRIER_TOKEN to a secret the segments "
				"share (pacer k8s puts one in a Secret); it authenticates their requests\n",
			cmd);
		return EXIT_USAGE;
	}
	d->segment = p->segment;
	d->count = p->segments;
	if (!wire_plan_fingerprint(argc, argv, d->plan)) {
		fprintf(stderr, "pacer %s: out of memory\n", cmd);
		return EXIT_RUNTIME;
	}
	return 0;
}

static void set_start(struct cli_dist *d, struct run_plan *p, uint64_t start_ns)
{
	d->start_ns = start_ns;
	timestamp_format(d->start_text, sizeof d->start_text, start_ns);
	p->start_at_wall_ns = start_ns;
	p->start_at_text = d->start_text;
	/* the two clocks read together again: the barrier may have taken
	 * minutes, over which the wall clock may have been slewed */
	p->map_realtime_ns = clock_wall_ns();
	p->map_monotonic_ns = clock_now_ns();
}

/* "in 2.9 s" or "2.1 s ago" of a wall-clock time. */
static void when(char *out, size_t cap, uint64_t t)
{
	uint64_t now = clock_wall_ns();
	if (t >= now)
		snprintf(out, cap, "in %.1f s", (double)(t - now) / 1e9);
	else
		snprintf(out, cap, "%.1f s ago", (double)(now - t) / 1e9);
}

int cli_dist_barrier(const char *cmd, struct cli_dist *d, struct run_plan *p)
{
	if (!d->barrier)
		return 0;
	char t[64], dur[32];
	units_fmt_duration(dur, sizeof dur, (double)d->timeout_ns);
	if (d->segment == 0) {
		struct dist_coord_cfg cfg = {.port = d->port, .count = d->count, .secret = d->secret,
					     .barrier_timeout_ns = d->timeout_ns,
					     .margin_ns = d->margin_ns};
		memcpy(cfg.plan, d->plan, sizeof cfg.plan);
		int rc = dist_coord_start(&cfg, &d->coord);
		if (rc) {
			fprintf(stderr, "pacer %s: --barrier: cannot listen on port %u: %s\n", cmd, d->port,
				err_name(rc));
			return EXIT_RUNTIME;
		}
		fprintf(stderr, "pacer %s: barrier: segment 0 of %u, waiting on port %u for the others "
				"(up to %s)\n",
			cmd, d->count, dist_coord_port(d->coord), dur);
		uint64_t start;
		uint32_t in;
		dist_coord_wait_release(d->coord, &start, &in);
		set_start(d, p, start);
		when(t, sizeof t, start);
		if (in == d->count) {
			fprintf(stderr, "pacer %s: barrier: all %u segments in; the load starts at %s (%s)\n",
				cmd, d->count, d->start_text, t);
		} else {
			char miss[256] = "";
			size_t at = 0;
			for (uint32_t k = 1; k < d->count && at + 16 < sizeof miss; k++)
				if (!dist_coord_checked_in(d->coord, k))
					at += (size_t)snprintf(miss + at, sizeof miss - at, "%s%u",
							       at ? ", " : "", k);
			fprintf(stderr, "pacer %s: barrier: %u of %u segments in after %s (not: %s); the "
					"load starts at %s (%s); a segment checking in later starts "
					"late\n",
				cmd, in, d->count, dur, miss, d->start_text, t);
		}
		return 0;
	}
	char hn[64] = "";
	if (gethostname(hn, sizeof hn - 1) || !hn[0])
		snprintf(hn, sizeof hn, "segment-%u", d->segment);
	struct wire_checkin ci = {.segment = d->segment, .count = d->count};
	memcpy(ci.plan, d->plan, sizeof ci.plan);
	for (size_t i = 0; hn[i] && i + 1 < sizeof ci.host; i++)
		ci.host[i] = (unsigned char)hn[i] <= ' ' || hn[i] == 0x7f ? '_' : hn[i];
	d->peer = calloc(1, sizeof *d->peer);
	if (!d->peer) {
		fprintf(stderr, "pacer %s: out of memory\n", cmd);
		return EXIT_RUNTIME;
	}
	*d->peer = (struct dist_peer){.host = d->host, .port = d->port, .secret = d->secret};
	fprintf(stderr, "pacer %s: barrier: segment %u of %u checking in with %s:%u\n", cmd,
		d->segment, d->count, d->host, d->port);
	uint64_t start;
	uint32_t in;
	char err[512];
	int rc = dist_checkin(d->peer, &ci, clock_now_ns() + d->timeout_ns, &start, &in, err,
			      sizeof err);
	if (rc) {
		fprintf(stderr, "pacer %s: --barrier: %s\n", cmd, err);
		return rc == -ENOMEM ? EXIT_RUNTIME : rc == -ETIMEDOUT ? EXIT_RUNTIME : EXIT_USAGE;
	}
	set_start(d, p, start);
	when(t, sizeof t, start);
	if (start < clock_wall_ns())
		fprintf(stderr, "pacer %s: barrier: the start (%s, %s) has passed: segment %u checked "
				"in after segment 0 released the others; starting at once, late\n",
			cmd, d->start_text, t, d->segment);
	else
		fprintf(stderr, "pacer %s: barrier: the load starts at %s (%s; %u of %u in)\n", cmd,
			d->start_text, t, in, d->count);
	return 0;
}

/* buf[len] framed (kind, label) written to path atomically. */
static int write_framed(const char *cmd, const char *opt, const char *path, const char *buf,
			size_t len, const char *kind, const char *label)
{
	char *f;
	size_t flen;
	int rc = frame_encode(buf, len, kind, label, &f, &flen);
	if (rc) {
		fprintf(stderr, "pacer %s: cannot frame the result: %s\n", cmd, err_name(rc));
		return EXIT_RUNTIME;
	}
	struct afile af;
	rc = afile_open(&af, path);
	if (!rc) {
		cli_test_signal("out-open");
		if (fwrite(f, 1, flen, af.f) != flen) {
			rc = -(errno ? errno : EIO);
			afile_abort(&af);
		} else {
			rc = afile_commit(&af);
		}
	}
	free(f);
	if (rc) {
		fprintf(stderr, "pacer %s: cannot write %s %s: %s\n", cmd, opt, path,
			cli_output_why(rc));
		return EXIT_RUNTIME;
	}
	return 0;
}

int cli_dist_emit(const char *cmd, const struct cli_dist *d, const char *json, size_t len,
		  const char *out_path, const char *report_dir)
{
	if (!d->framed)
		return (out_path || report_dir) ? cli_result_emit_buf(cmd, json, len, out_path, report_dir)
						: 0;
	if (report_dir && cli_result_emit_buf(cmd, json, len, NULL, report_dir))
		return EXIT_RUNTIME;
	char label[24] = "-";
	const char *kind = "result";
	if (d->count >= 2) {
		kind = "segment";
		snprintf(label, sizeof label, "%u/%u", d->segment, d->count);
	}
	/* the JSON cli_result_render made; frames are read back by
	 * result_read_mem, as files are */
	return out_path ? write_framed(cmd, "--out", out_path, json, len, kind, label) : 0;
}

int cli_merged_write(const char *cmd, const json_t *merged, const char *out, bool framed)
{
	char *buf = json_dumps(merged, JSON_INDENT(1) | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER);
	if (!buf) {
		fprintf(stderr, "pacer %s: out of memory\n", cmd);
		return EXIT_RUNTIME;
	}
	size_t len = strlen(buf);
	int rc = 0;
	if (framed) {
		char label[24];
		json_int_t n = json_integer_value(
			json_object_get(json_object_get(merged, KEY_MERGED), KEY_SEGMENTS));
		snprintf(label, sizeof label, "%lld", (long long)(n > 0 ? n : 0));
		rc = write_framed(cmd, "-o", out, buf, len, "merged", label);
	} else {
		struct afile af;
		rc = afile_open(&af, out);
		if (!rc) {
			cli_test_signal("out-open");
			if (fwrite(buf, 1, len, af.f) != len || fputc('\n', af.f) == EOF) {
				rc = -(errno ? errno : EIO);
				afile_abort(&af);
			} else {
				rc = afile_commit(&af);
			}
		}
		if (rc) {
			fprintf(stderr, "pacer %s: cannot write %s: %s\n", cmd, out,
				cli_output_why(rc));
			rc = EXIT_RUNTIME;
		}
	}
	free(buf);
	return rc;
}

/* Segment 0: the others' results, merged with its own, written. */
static int collect(const char *cmd, struct cli_dist *d, const char *json, size_t len)
{
	dist_coord_close_checkin(d->coord);
	uint64_t latest = dist_coord_latest_checkin(d->coord);
	uint64_t late = latest > d->start_ns ? latest - d->start_ns : 0;
	char dur[32];
	units_fmt_duration(dur, sizeof dur, (double)(d->handin_ns + late));
	fprintf(stderr, "pacer %s: hand-in: waiting for the other segments' results (up to %s)\n",
		cmd, dur);
	dist_coord_wait_results(d->coord, clock_now_ns() + d->handin_ns + late);
	char list[512] = "";
	size_t at = 0;
	for (uint32_t k = 1; k < d->count && at + 64 < sizeof list; k++) {
		size_t l;
		if (!dist_coord_checked_in(d->coord, k))
			at += (size_t)snprintf(list + at, sizeof list - at, "%s%u never checked in",
					       at ? ", " : "", k);
		else if (!dist_coord_result(d->coord, k, &l))
			at += (size_t)snprintf(list + at, sizeof list - at,
					       "%s%u did not hand its result in", at ? ", " : "", k);
	}
	if (at) {
		fprintf(stderr, "pacer %s: no merged result: segment %s (every segment's framed "
				"result is in its own log: pacer merge LOGS...)\n",
			cmd, list);
		return EXIT_RUNTIME;
	}
	struct loaded_result *res = calloc(d->count, sizeof *res);
	struct merge_input *in = calloc(d->count, sizeof *in);
	char (*names)[32] = calloc(d->count, sizeof *names);
	int code = res && in && names ? EXIT_OK : EXIT_RUNTIME;
	char err[1024];
	uint32_t loaded = 0;
	for (; code == EXIT_OK && loaded < d->count; loaded++) {
		uint32_t k = loaded;
		size_t l = len;
		const char *j = k == 0 ? json : dist_coord_result(d->coord, k, &l);
		snprintf(names[k], sizeof names[k], "hand-in %u/%u", k, d->count);
		int rc = result_read_mem(&res[k], j, l, names[k], err, sizeof err);
		if (rc) {
			fprintf(stderr, "pacer %s: hand-in: %s\n", cmd, err);
			code = rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
			break;
		}
		in[k] = (struct merge_input){.name = names[k], .root = res[k].root};
	}
	json_t *merged = NULL;
	if (code == EXIT_OK) {
		int rc = result_merge(in, d->count, &merged, err, sizeof err);
		if (rc) {
			fprintf(stderr, "pacer %s: hand-in: merge: %s\n", cmd, err);
			code = rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
		}
	}
	for (uint32_t k = 0; k < loaded && res; k++)
		result_free(&res[k]);
	free(res);
	free(in);
	free(names);
	if (code == EXIT_OK) {
		code = cli_merged_write(cmd, merged, d->merged_out, d->framed);
		if (code == EXIT_OK)
			fprintf(stderr, "pacer %s: hand-in: the %u segments' results merged into %s\n",
				cmd, d->count, afile_is_stdout(d->merged_out) ? "stdout" : d->merged_out);
	}
	json_decref(merged);
	return code;
}

int cli_dist_finish(const char *cmd, struct cli_dist *d, const char *json, size_t len)
{
	if (!d->barrier)
		return 0;
	if (d->segment == 0)
		return collect(cmd, d, json, len);
	char *f;
	size_t flen;
	char label[24];
	snprintf(label, sizeof label, "%u/%u", d->segment, d->count);
	int rc = frame_encode(json, len, "segment", label, &f, &flen);
	if (rc) {
		fprintf(stderr, "pacer %s: cannot frame the result: %s\n", cmd, err_name(rc));
		return EXIT_RUNTIME;
	}
	char err[512];
	rc = dist_handin(d->peer, f, flen, clock_now_ns() + d->handin_ns, err, sizeof err);
	free(f);
	if (rc) {
		fprintf(stderr, "pacer %s: hand-in: %s\n", cmd, err);
		return EXIT_RUNTIME;
	}
	fprintf(stderr, "pacer %s: hand-in: segment %u's result handed in to %s:%u\n", cmd,
		d->segment, d->host, d->port);
	return 0;
}

void cli_dist_release(struct cli_dist *d)
{
	dist_coord_stop(d->coord);
	d->coord = NULL;
	free(d->peer);
	d->peer = NULL;
}
