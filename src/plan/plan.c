#include "plan/plan.h"

#include <stdio.h>
#include <string.h>

#include "util/err.h"
#include "util/units.h"
#include "util/time_units.h"

void plan_defaults(struct run_plan *p)
{
	memset(p, 0, sizeof *p);
	p->arrival = SCHED_CONSTANT;
	p->burst_size = 1;
	p->seed = 1;
	p->duration_ns = 10 * NS_PER_S;
	p->timeout_ns = 10 * NS_PER_S;
	p->spin_ns = 100 * NS_PER_US;
	p->calibrate_ns = PLAN_CALIBRATE_DEFAULT_NS;
	p->send_window_ns = PLAN_SEND_WINDOW_DEFAULT_NS;
	p->connections = 64;
	p->concurrency = 10;
	p->threads = 1;
	p->repeat = 1;
}

const char *plan_method(const struct run_plan *p)
{
	if (p->method)
		return p->method;
	return p->body ? "POST" : "GET";
}

const char *plan_pacing(const struct run_plan *p, const char **why)
{
	if (why)
		*why = NULL;
	if (!p->open_loop)
		return NULL;
	if (p->precise || !p->send_window_ns)
		return "precise";
	if (p->unix_socket) {
		if (why)
			*why = "--unix-socket: Unix stream sockets carry no receive timestamps";
		return "precise";
	}
	return "batched";
}

bool plan_http3(const struct run_plan *p)
{
	return p->http.http3 || (p->http.alpn && !strcmp(p->http.alpn, "h3"));
}

bool plan_tls_resume(const struct run_plan *p)
{
	return !p->tls.no_resume;
}

const char *sched_arrival_name(enum sched_arrival a)
{
	return a == SCHED_POISSON ? "poisson" : "constant";
}

#define FAIL(...)                                                                        \
	do {                                                                             \
		snprintf(err, cap, __VA_ARGS__);                                         \
		return PACER_ERANGE;                                                     \
	} while (0)

int plan_validate(const struct run_plan *p, char *err, size_t cap)
{
	if (p->threads == 0 || p->threads > 256)
		FAIL("--threads %u: must be between 1 and 256", p->threads);
	if (p->repeat < 1 || p->repeat > 1000)
		FAIL("--repeat %u: between 1 and 1000", p->repeat);
	if (p->spin_ns > 10 * NS_PER_MS)
		FAIL("--spin: at most 10ms");
	if (p->send_window_ns > 100 * NS_PER_MS)
		FAIL("--send-window: at most 100ms");
	if (p->timeout_ns < NS_PER_MS)
		FAIL("--timeout: must be at least 1ms");
	if (p->burst_size < 1 || p->burst_size > PLAN_BURST_MAX)
		FAIL("--burst-size %u: between 1 and %u", p->burst_size, PLAN_BURST_MAX);
	if (p->precision > 0 && !p->open_loop)
		FAIL("--precision-budget: open loop only (give --rate)");
	if (p->precision > 0 && p->precise)
		FAIL("--precision-budget and --precise: give one (--precision-budget sizes the "
		     "send window of batched pacing; --precise wakes for every due time)");
	if (p->precision > 0 && p->unix_socket)
		FAIL("--precision-budget and --unix-socket: give one (Unix stream sockets carry no "
		     "receive timestamps, so pacing is precise and has no send window to size)");
	if (p->burst_size > 1 && !p->open_loop)
		FAIL("--burst-size: open loop only (give --rate)");
	if (p->open_loop) {
		if (p->rate_per_s <= 0)
			FAIL("--rate: must be above 0");
		if (p->rate_per_s < PLAN_MIN_RATE_PER_S)
			FAIL("--rate %g: at least %g requests/s (one per %.0f s)", p->rate_per_s,
			     PLAN_MIN_RATE_PER_S, 1 / PLAN_MIN_RATE_PER_S);
		if (p->connections == 0)
			FAIL("--connections: must be at least 1");
		if (p->connections < p->threads)
			FAIL("--connections %u: fewer than --threads %u", p->connections, p->threads);
		if (p->requests)
			FAIL("--requests: only for closed loop (without --rate)");
		if (p->duration_ns == 0)
			FAIL("--duration: must be above 0 with --rate");
	} else {
		if (p->concurrency == 0)
			FAIL("--concurrency: must be at least 1");
		if (p->concurrency < p->threads)
			FAIL("--concurrency %u: fewer than --threads %u", p->concurrency, p->threads);
		if (!p->requests && p->duration_ns == 0)
			FAIL("--duration: must be above 0 (or give --requests)");
	}
	if (p->tls.resume_flag && p->tls.no_resume)
		FAIL("--tls-resume and --no-tls-resume: give one");
	if (p->tls.insecure && p->tls.cacert)
		FAIL("--insecure and --cacert: give one (--insecure verifies nothing)");
	if (p->tls.key && !p->tls.cert)
		FAIL("--key: needs --cert (the client certificate)");
	if (p->tls.self_signed && !p->self_contained)
		FAIL("--tls is for --self-contained runs; for another server give an https:// URL");
	if (p->unix_socket && p->self_contained)
		FAIL("--unix-socket does not combine with --self-contained (the embedded target "
		     "listens on loopback TCP)");
	if (p->connect_to && p->unix_socket)
		FAIL("--connect-to and --unix-socket: give one (both say where to connect)");
	if (p->connect_to && p->self_contained)
		FAIL("--connect-to does not combine with --self-contained (pacer connects to its "
		     "embedded target itself)");
	if (p->segments) {
		if (p->segments < 2 || p->segments > PLAN_MAX_SEGMENTS)
			FAIL("--segment %u/%u: N must be from 2 to %d", p->segment, p->segments,
			     PLAN_MAX_SEGMENTS);
		if (p->segment >= p->segments)
			FAIL("--segment %u/%u: K must be from 0 to N-1 = %u", p->segment, p->segments,
			     p->segments - 1);
		uint64_t need = (uint64_t)p->segments * p->threads;
		if (p->open_loop && p->connections < need)
			FAIL("--connections %u with --segment K/%u and --threads %u: every segment needs "
			     "one per thread, so at least %llu",
			     p->connections, p->segments, p->threads, (unsigned long long)need);
		if (!p->open_loop && p->concurrency < need)
			FAIL("--concurrency %u with --segment K/%u and --threads %u: every segment needs "
			     "one per thread, so at least %llu",
			     p->concurrency, p->segments, p->threads, (unsigned long long)need);
		if (!p->open_loop && p->requests && p->requests < p->segments)
			FAIL("--requests %llu with --segment K/%u: fewer requests than segments",
			     (unsigned long long)p->requests, p->segments);
	}
	if (p->http.alpn && strcmp(p->http.alpn, "h3") != 0)
		FAIL("--alpn %s: only h3 (HTTP/3 over QUIC); HTTP/2 over TLS is --http2", p->http.alpn);
	if (plan_http3(p)) {
		if (p->http.http2 || p->http.h2c)
			FAIL("--http3 and %s: give one", p->http.h2c ? "--h2c" : "--http2");
		if (p->unix_socket)
			FAIL("--http3 is QUIC over UDP: not with --unix-socket");
		if (p->url.host[0] && !p->url.tls && !p->table_source)
			FAIL("--http3 is HTTP/3 over QUIC, which is always encrypted: give an https:// URL");
	}
	bool h2 = p->http.http2 || p->http.h2c || plan_http3(p);
	if (p->http.http2 && *p->http.http2 && strcmp(p->http.http2, "prefer") != 0)
		FAIL("--http2=%s: the value is 'prefer' (fall back to HTTP/1.1), or give --http2 alone",
		     p->http.http2);
	if (p->http.http2 && p->http.h2c)
		FAIL("--http2 and --h2c: give one (--http2 over TLS, --h2c over cleartext)");
	if (p->http.max_streams && !h2)
		FAIL("--max-streams: only with --h2c, --http2 or --http3");
	if (p->http.max_streams > PLAN_MAX_STREAMS)
		FAIL("--max-streams %u: at most %u", p->http.max_streams, PLAN_MAX_STREAMS);
	if (p->http.window) {
		uint64_t win = 0;
		if (!h2)
			FAIL("--h2-window: only with --h2c, --http2 or --http3");
		if (units_parse_size(p->http.window, &win) || win < 65535 || win > 2147483647)
			FAIL("--h2-window %s: a size from 64KiB to 2GiB-1 (e.g. 16MiB)", p->http.window);
	}
	if (p->http.h2c && p->url.tls)
		FAIL("--h2c is HTTP/2 over cleartext; for an https:// URL give --http2");
	if (p->http.http2 && p->url.host[0] && !p->url.tls && !p->table_source)
		FAIL("--http2 is HTTP/2 over TLS (ALPN h2): give an https:// URL, or --h2c for http://");
	uint32_t conns = p->open_loop ? p->connections : p->concurrency;
	if (conns > 1000000)
		FAIL("%s %u: at most 1000000", p->open_loop ? "--connections" : "--concurrency", conns);
	return 0;
}

uint64_t plan_start_mono_ns(const struct run_plan *p)
{
	if (!p->start_at_wall_ns)
		return 0;
	if (p->start_at_wall_ns <= p->map_realtime_ns)
		return p->map_monotonic_ns;
	return p->map_monotonic_ns + (p->start_at_wall_ns - p->map_realtime_ns);
}
