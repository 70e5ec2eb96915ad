/* pacer — engine: the API (engine.h). Opening a session (checks, hosts,
 * workers, threads started with signals blocked), starting a step, the
 * progress snapshot, and merging the workers' figures into a run_result
 * after a step; the workers themselves are in worker.c (engine_int.h draws
 * the whole engine). */
#include "engine/engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "engine/engine_int.h"

/* --realtime: the guard first (RLIMIT_RTTIME, when it is higher), then
 * every worker at ENGINE_RT_POLICY; a refusal leaves them all as they
 * were. 0 or the negative errno. */
static int realtime_on(struct engine *e)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_RTTIME, &rl) == 0 &&
	    (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > ENGINE_RT_RTTIME_US)) {
		rl.rlim_cur = ENGINE_RT_RTTIME_US;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
			rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_RTTIME, &rl) != 0)
			return -errno;
	}
	struct sched_param sp = {.sched_priority = ENGINE_RT_PRIORITY};
	int rc = 0;
	uint32_t done = 0;
	for (; done < e->started && !rc; done++)
		rc = -pthread_setschedparam(e->w[done].thread, ENGINE_RT_POLICY, &sp);
	if (rc) {
		struct sched_param normal = {.sched_priority = 0};
		for (uint32_t i = 0; i + 1 < done; i++)
			pthread_setschedparam(e->w[i].thread, SCHED_OTHER, &normal);
	}
	return rc;
}

/* The protocols a connection may speak (engine_int.h, struct eng_proto):
 * a new one is a file of its own and a line here. */
static const struct eng_proto *const protocols[] = {&eng_proto_h1, &eng_proto_h2, &eng_proto_h3};
#define N_PROTOCOLS (sizeof protocols / sizeof protocols[0])
/* The transports, for their worker-wide hooks. */
static const struct eng_xport *const transports[] = {&eng_xport_plain, &eng_xport_tls,
						     &eng_xport_quic};
#define N_TRANSPORTS (sizeof transports / sizeof transports[0])

/* Which protocol a connection speaks when its transport is ready, and
 * which when the server chose HTTP/2 by ALPN (engine_int.h). */
static void pick_protocols(struct engine *e)
{
	e->protos = protocols;
	e->n_protos = N_PROTOCOLS;
	e->xports = transports;
	e->n_xports = N_TRANSPORTS;
	for (uint32_t h = 0; h < e->n_hosts; h++)
		e->xport[h] = e->cfg.http == ENGINE_H3 ? &eng_xport_quic
			      : e->hosts[h].tls	     ? &eng_xport_tls
						     : &eng_xport_plain;
	switch (e->cfg.http) {
	case ENGINE_H3:
		e->proto_default = &eng_proto_h3; /* ALPN h3 is the QUIC handshake's condition */
		break;
	case ENGINE_H2C:
		e->proto_default = &eng_proto_h2; /* prior knowledge */
		break;
	case ENGINE_H2:
		e->proto_alpn_h2 = &eng_proto_h2; /* nothing else will do */
		break;
	case ENGINE_H2_PREFER:
		e->proto_alpn_h2 = &eng_proto_h2;
		e->proto_default = &eng_proto_h1;
		break;
	default:
		e->proto_default = &eng_proto_h1;
	}
}

static void protocols_release(struct engine *e)
{
	for (size_t k = 0; k < e->n_protos; k++)
		if (e->protos[k]->release)
			e->protos[k]->release(e);
}

static void engine_free(struct engine *e)
{
	for (uint32_t i = 0; i < e->n_threads; i++)
		eng_worker_free(&e->w[i]);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->cv);
	free(e->w);
	protocols_release(e);
	free(e->hosts);
	free(e);
}

int engine_open(struct engine **out, const struct engine_cfg *cfg)
{
	if (cfg->threads == 0 || cfg->timeout_ns == 0 || !cfg->reqs || !cfg->n_reqs)
		return -EINVAL;
	if (cfg->n_hosts > ENGINE_MAX_HOSTS || (cfg->n_hosts && !cfg->hosts))
		return -EINVAL;
	uint32_t n_hosts = cfg->n_hosts ? cfg->n_hosts : 1;
	for (size_t i = 0; i < cfg->n_reqs; i++)
		if (!cfg->reqs[i].buf || !cfg->reqs[i].len || cfg->reqs[i].host >= n_hosts)
			return -EINVAL;
	if (cfg->n_names > RESULT_MAX_NAMES + 1)
		return -EINVAL;
	for (size_t i = 0; cfg->n_names >= 2 && i < cfg->n_reqs; i++)
		if (cfg->reqs[i].name >= cfg->n_names)
			return -EINVAL;
	if (cfg->open_loop ? cfg->connections == 0 : cfg->concurrency == 0)
		return -EINVAL;
	if (cfg->n_reqs >= QE_FLOW) /* a backlog entry keeps flags above the index */
		return -EINVAL;
	if (cfg->flows && (!cfg->flow_state || !cfg->flows->start || !cfg->flows->result ||
			   !cfg->flows->wake || !cfg->flows->abandon))
		return -EINVAL;
	struct engine *e = calloc(1, sizeof *e);
	if (!e)
		return -ENOMEM;
	e->hosts = calloc(n_hosts, sizeof *e->hosts);
	if (!e->hosts) {
		free(e);
		return -ENOMEM;
	}
	if (cfg->n_hosts)
		memcpy(e->hosts, cfg->hosts, n_hosts * sizeof *e->hosts);
	else
		e->hosts[0] = (struct engine_host){
			.addr = cfg->addr, .tls = cfg->tls, .tls_host = cfg->tls_host, .quic = cfg->quic};
	e->n_hosts = n_hosts;
	for (size_t i = 0; i < cfg->n_reqs; i++)
		e->host_reqs[cfg->reqs[i].host]++;
	e->cfg = *cfg;
	e->cfg.hosts = e->hosts;
	e->cfg.n_hosts = n_hosts;
	e->n_threads = cfg->threads;
	e->collected = true;
	/* Batched pacing reads responses late and times them by the kernel's
	 * receive stamps, which Unix stream sockets do not carry. */
	e->stamps = true;
	for (uint32_t h = 0; h < n_hosts; h++) {
		sa_family_t f = e->hosts[h].addr.ss.ss_family;
		if (f != AF_INET && f != AF_INET6)
			e->stamps = false;
	}
	e->batched = cfg->open_loop && cfg->send_window_ns > 0 && e->stamps;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	pick_protocols(e);
	int hrc = 0;
	for (size_t k = 0; k < e->n_protos && !hrc; k++)
		if (e->protos[k]->prepare)
			hrc = e->protos[k]->prepare(e);
	if (hrc) {
		protocols_release(e);
		pthread_mutex_destroy(&e->mu);
		pthread_cond_destroy(&e->cv);
		free(e->hosts);
		free(e);
		return hrc;
	}
	e->w = aligned_alloc(64, ((sizeof *e->w * cfg->threads) + 63) / 64 * 64);
	if (!e->w) {
		protocols_release(e);
		free(e->hosts);
		free(e);
		return -ENOMEM;
	}
	memset(e->w, 0, sizeof *e->w * cfg->threads);
	int rc = 0;
	for (uint32_t i = 0; i < cfg->threads && !rc; i++)
		rc = eng_worker_init(&e->w[i], e, i);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (uint32_t i = 0; i < cfg->threads && !rc; i++) {
		rc = -pthread_create(&e->w[i].thread, NULL, eng_worker_main, &e->w[i]);
		if (!rc)
			e->started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		engine_close(e);
		return rc;
	}
	e->rt_status = cfg->realtime ? realtime_on(e) : 1;
	*out = e;
	return 0;
}

int engine_realtime(const struct engine *e) { return e->rt_status; }

int engine_floor(struct engine *e, uint64_t duration_ns, bool loopback, struct gen_floor *out)
{
	memset(out, 0, sizeof *out);
	if (!e->collected || !engine_done(e) || !duration_ns)
		return -EBUSY;
	uint64_t t0 = clock_now_ns();
	pthread_mutex_lock(&e->mu);
	e->floor_ns = duration_ns;
	atomic_store(&e->stop, false);
	for (uint32_t i = 0; i < e->n_threads; i++)
		atomic_store_explicit(&e->w[i].done, false, memory_order_relaxed);
	e->step_seq++;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	while (!engine_done(e)) {
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	e->floor_ns = 0;
	struct hist all;
	int rc = hist_init(&all, 7, HIST_MAX_NS);
	for (uint32_t i = 0; i < e->n_threads && !rc; i++)
		rc = hist_merge(&all, &e->w[i].floor_hist);
	if (!rc && all.total) {
		out->known = true;
		out->method = e->batched ? "sleep" : "epoll";
		out->slack_ns = TIMER_SLACK_NS;
		out->realtime = e->rt_status == 0;
		out->samples = all.total;
		out->wake_p50_ns = hist_percentile(&all, 50);
		out->wake_p99_ns = hist_percentile(&all, 99);
		out->wake_max_ns = all.max;
	}
	hist_free(&all);
	if (!rc && loopback)
		(void)eng_loopback_rtt(duration_ns / 2, out); /* none: rtt_known stays false */
	out->duration_ns = clock_now_ns() - t0;
	return rc;
}


int engine_step_start(struct engine *e, const struct engine_step *s)
{
	if (!e->collected || !engine_done(e))
		return -EBUSY;
	if (e->cfg.open_loop ? s->rate_per_s <= 0 || s->duration_ns == 0
			     : !s->requests && s->duration_ns == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < e->n_threads; i++) {
		/* a segment's backlog: 30 s of its own share (of the global rate) */
		uint32_t parts = e->n_threads * (e->cfg.segments > 1 ? e->cfg.segments : 1);
		int rc = eng_queue_size(&e->w[i], e->cfg.open_loop ? s->rate_per_s / parts : 0);
		if (rc)
			return rc;
	}
	if (e->cfg.segments > 1 && e->step_seq > 0) {
		/* arrivals (closed loop: requests) are numbered over the whole
		 * session, so that a step's arrival i carries the request one
		 * process would give it: this one begins after the last step's
		 * (e->step still), counted here, between the steps, and only
		 * when there is a next one (a Poisson count draws its stream) */
		const struct engine_step *last = &e->step;
		e->arrival_base += e->cfg.open_loop
					   ? sched_count_bursts(e->cfg.arrival, last->rate_per_s,
								e->cfg.burst,
								e->cfg.seed * SEED_MIX_SCHED,
								last->warmup_ns + last->duration_ns)
					   : last->requests;
	}
	pthread_mutex_lock(&e->mu);
	e->step = *s;
	/* Start shortly in the future so every worker is ready (and its
	 * connections are open) before the first request is due. */
	e->t0_ns = clock_now_ns() + START_LEAD_NS;
	if (s->start_ns > e->t0_ns)
		e->t0_ns = s->start_ns; /* --start-at */
	e->warm_end_ns = e->t0_ns + s->warmup_ns;
	bool by_count = !e->cfg.open_loop && s->requests && !s->duration_limits;
	e->meas_end_ns = by_count ? UINT64_MAX : e->warm_end_ns + s->duration_ns;
	atomic_store(&e->stop, false);
	atomic_store(&e->stop_ns, 0);
	atomic_store(&e->aborted, false);
	for (uint32_t i = 0; i < e->n_threads; i++) {
		atomic_store_explicit(&e->w[i].done, false, memory_order_relaxed);
		atomic_store_explicit(&e->w[i].pub_backlog, 0, memory_order_relaxed);
	}
	e->collected = false;
	e->step_seq++;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	return 0;
}

void engine_close(struct engine *e)
{
	if (!e)
		return;
	engine_interrupt(e);
	pthread_mutex_lock(&e->mu);
	e->quit = true;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	for (uint32_t i = 0; i < e->started; i++)
		pthread_join(e->w[i].thread, NULL);
	engine_free(e);
}

void engine_interrupt(struct engine *e)
{
	eng_stop_all(e);
}

bool engine_aborted(const struct engine *e)
{
	return atomic_load(&e->aborted);
}

bool engine_done(struct engine *e)
{
	for (uint32_t i = 0; i < e->started; i++)
		if (!atomic_load_explicit(&e->w[i].done, memory_order_acquire))
			return false;
	return true;
}

bool engine_batched(const struct engine *e) { return e->batched; }

uint64_t engine_step_t0_ns(const struct engine *e) { return e->t0_ns; }

void engine_progress(struct engine *e, struct engine_progress *p)
{
	memset(p, 0, sizeof *p);
	uint64_t now = clock_now_ns();
	p->elapsed_ns = now > e->t0_ns ? now - e->t0_ns : 0;
	p->in_warmup = now < e->warm_end_ns;
	p->warmup_ns = e->warm_end_ns - e->t0_ns;
	p->in_drain = now >= e->meas_end_ns;
	if (e->meas_end_ns != UINT64_MAX)
		p->total_ns = e->meas_end_ns - e->t0_ns;
	for (uint32_t i = 0; i < e->started; i++) {
		struct worker *w = &e->w[i];
		p->completed += atomic_load_explicit(&w->pub_completed, memory_order_relaxed);
		p->errors += atomic_load_explicit(&w->pub_errors, memory_order_relaxed);
		uint64_t p99 = atomic_load_explicit(&w->pub_p99_ns, memory_order_relaxed);
		if (p99 > p->p99_ns) {
			p->p99_ns = p99;
			p->p99_warmup = atomic_load_explicit(&w->pub_p99_warm, memory_order_relaxed);
		}
		uint64_t mx = atomic_load_explicit(&w->pub_max_ns, memory_order_relaxed);
		if (mx > p->max_ns)
			p->max_ns = mx;
		mx = atomic_load_explicit(&w->pub_max_meas_ns, memory_order_relaxed);
		if (mx > p->max_measure_ns)
			p->max_measure_ns = mx;
		p->rate_per_s += (double)atomic_load_explicit(&w->pub_last_sec_completed,
							      memory_order_relaxed);
		p->backlog += atomic_load_explicit(&w->pub_backlog, memory_order_relaxed);
	}
}

/* Batched pacing: the send window of every worker's every measured second
 * (the series' seconds), for the result's min, median and max. */
static int pace_windows(struct engine *e, struct run_result *res)
{
	size_t n = 0;
	for (uint32_t i = 0; i < e->n_threads; i++)
		n += e->w[i].secs_len;
	if (!n)
		return 0;
	res->pace_windows_ns = malloc(n * sizeof *res->pace_windows_ns);
	if (!res->pace_windows_ns)
		return -ENOMEM;
	for (uint32_t i = 0; i < e->n_threads; i++)
		for (size_t k = 0; k < e->w[i].secs_len; k++)
			if (e->w[i].secs[k].window_ns)
				res->pace_windows_ns[res->n_pace_windows++] =
					e->w[i].secs[k].window_ns;
	return 0;
}

int engine_step_finish(struct engine *e, struct run_result *res)
{
	while (!engine_done(e)) {
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	e->collected = true;
	memset(res, 0, sizeof *res);
	int rc = phase_stats_init(&res->warmup);
	if (!rc)
		rc = phase_stats_init(&res->measure);
	if (!rc) {
		res->gen_thread_cpu_ns = calloc(e->n_threads, sizeof *res->gen_thread_cpu_ns);
		if (!res->gen_thread_cpu_ns)
			rc = -ENOMEM;
	}
	uint64_t last = 0;
	bool oom = false;
	res->gen_cpu_wait_known = true;
	for (uint32_t i = 0; i < e->n_threads && !rc; i++) {
		struct worker *w = &e->w[i];
		rc = phase_stats_merge(&res->warmup, &w->warm);
		if (!rc)
			rc = phase_stats_merge(&res->measure, &w->meas);
		if (w->last_completion_ns > last)
			last = w->last_completion_ns;
		res->gen_cpu_ns += w->cpu_ns;
		res->gen_spin_ns += w->spun_ns;
		if (w->cpu_wait_ns == UINT64_MAX)
			res->gen_cpu_wait_known = false;
		else
			res->gen_cpu_wait_ns += w->cpu_wait_ns;
		if (res->gen_thread_cpu_ns)
			res->gen_thread_cpu_ns[i] = w->cpu_ns;
		double pct = w->wall_ns ? 100.0 * (double)w->cpu_ns / (double)w->wall_ns : 0;
		if (pct > res->gen_busiest_thread_pct)
			res->gen_busiest_thread_pct = pct;
		oom |= w->oom != 0;
	}
	if (!rc)
		rc = eng_series_merge(e, res);
	if (!rc && e->batched)
		rc = pace_windows(e, res);
	res->interrupted = atomic_load(&e->stop);
	res->open_loop = e->cfg.open_loop;
	res->pace_batched = e->batched;
	/* a segment offers its share of the global rate */
	res->offered_rate_per_s = e->cfg.open_loop ? e->step.rate_per_s /
							     (e->cfg.segments > 1 ? e->cfg.segments : 1)
						   : 0;
	res->threads = e->n_threads;
	res->rx_stamped = e->stamps;
	res->warmup_ns = e->step.warmup_ns;
	res->measure_start_ns = e->warm_end_ns;
	/* Measured time: the planned window, or up to the last measured response
	 * when that is later (a count-based run, or a backlog served in drain). */
	uint64_t window = e->meas_end_ns != UINT64_MAX ? e->meas_end_ns - e->warm_end_ns : 0;
	uint64_t to_last = last > e->warm_end_ns ? last - e->warm_end_ns : 0;
	res->measure_ns = to_last > window ? to_last : window;
	res->window_ns = window;
	/* Interrupted before the planned end: measured until the interrupt, not
	 * until the last response (after a stall that is long before, and the
	 * requests due since are queued or in flight, not absent). */
	uint64_t stop_ns = atomic_load(&e->stop_ns);
	if (res->interrupted && stop_ns && stop_ns < e->meas_end_ns)
		res->measure_ns = stop_ns > e->warm_end_ns ? stop_ns - e->warm_end_ns : 0;
	if (oom && !rc)
		rc = -ENOMEM;
	return rc;
}
