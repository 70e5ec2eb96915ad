#include "plan/sched.h"

#include <math.h>
#include <stdbool.h>

#include "util/rng.h"

/* ---- the Poisson tree ---------------------------------------------------
 *
 * S_j is the sum of the stream's first j gaps (in mean gaps; S_0 = 0), and
 * arrival i is due at S_{i+1}. The top is drawn in order: S_1 ~ Exp(1) and
 * S_{2^(k+1)} = S_{2^k} + Gamma(2^k). Between two known ends, a node
 * [lo, hi] of 2w iid exponential gaps splits at lo + w: the left half's
 * share of the node's sum is Beta(w, w), independent of the sum and of what
 * happens inside either half, so drawing it (from a key of the node alone)
 * and recursing gives exactly iid exponential gaps: a Poisson process, the
 * same whichever lane of it is asked for and in whatever order. */

#define KEY_TOP 0x6a09e667f3bcc909ull
#define KEY_NODE 0xd1b54a32d192ed03ull
#define TWO_PI 6.283185307179586

/* Uniform in (0, 1]: number i of key's stream. */
static double unit_at(uint64_t key, uint64_t i)
{
	return (double)((rng_at(key, i) >> 11) + 1) * 0x1.0p-53;
}

/* Gamma(n), n >= 1 (Marsaglia and Tsang, with Box-Muller normals), from
 * key's stream. */
static double gamma_at(uint64_t key, double n)
{
	double d = n - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
	for (uint64_t i = 0;; i += 3) {
		double x = sqrt(-2.0 * log(unit_at(key, i))) * cos(TWO_PI * unit_at(key, i + 1));
		double v = 1.0 + c * x;
		if (v <= 0)
			continue;
		v = v * v * v;
		double u = unit_at(key, i + 2);
		if (u < 1.0 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
			return d * v;
	}
}

/* Beta(w, w), w >= 1 a power of two, from key. For w <= 4 the w-th
 * smallest of 2w - 1 uniforms (w = 1: one uniform; 2: the median of three),
 * cheaper than transcendental functions for the small nodes, which are most
 * of them. For larger w, exactly, the first coordinate of a point of the
 * disc with density proportional to (1 - r^2)^(w - 3/2), mapped from
 * [-1, 1] to [0, 1] (Ulrich 1984): r^2 = 1 - U^(2/(2w-1)), its angle
 * uniform (expm1 keeps r exact near 0 for large w). */
static double beta_sym_at(uint64_t key, uint64_t w)
{
	if (w == 1)
		return unit_at(key, 0);
	if (w == 2) { /* the median of three uniforms */
		double a = unit_at(key, 0), b = unit_at(key, 1), c = unit_at(key, 2);
		double lo = a < b ? a : b, hi = a < b ? b : a;
		return c < lo ? lo : c > hi ? hi : c;
	}
	if (w == 4) { /* the 4th of seven, by insertion */
		double u[7];
		uint64_t n = 2 * w - 1;
		for (uint64_t i = 0; i < n; i++) {
			double v = unit_at(key, i);
			uint64_t j = i;
			for (; j > 0 && u[j - 1] > v; j--)
				u[j] = u[j - 1];
			u[j] = v;
		}
		return u[w - 1];
	}
	double r = sqrt(-expm1(2.0 * log(unit_at(key, 0)) / (double)(2 * w - 1)));
	return 0.5 + 0.5 * r * cos(TWO_PI * unit_at(key, 1));
}

/* S_{2^k}. */
static double top_at(struct sched *s, uint32_t k)
{
	while (s->n_top <= k) {
		uint32_t n = s->n_top++;
		uint64_t key = rng_at(s->key ^ KEY_TOP, n);
		s->top[n] = n == 0 ? -log(unit_at(key, 0))
				   : s->top[n - 1] + gamma_at(key, ldexp(1.0, (int)n - 1));
	}
	return s->top[k];
}

/* S at the middle of node [lo, hi] whose ends are s_lo and s_hi. */
static double node_mid(const struct sched *s, uint64_t lo, uint64_t hi, double s_lo, double s_hi)
{
	uint64_t w = (hi - lo) / 2;
	uint64_t key = rng_at(s->key ^ KEY_NODE * (uint64_t)(__builtin_ctzll(w) + 1), lo);
	double m = s_lo + (s_hi - s_lo) * beta_sym_at(key, w);
	return m < s_lo ? s_lo : m > s_hi ? s_hi : m;
}

/* A walk for the indices j = from, from + stride, ... below to. */
struct walk {
	uint64_t from, to, stride;
};

/* Whether the walk has an index in (lo, hi]. */
static bool walk_in(const struct walk *wk, uint64_t lo, uint64_t hi)
{
	uint64_t a = lo + 1 > wk->from ? lo + 1 : wk->from;
	if (wk->stride > 1 && (a - wk->from) % wk->stride)
		a += wk->stride - (a - wk->from) % wk->stride;
	return a <= hi && a < wk->to;
}

/* Due time of S = v: rounded to the ns (v >= 0). */
static uint64_t due_of(const struct sched *s, double v)
{
	return (uint64_t)(v * s->interval_ns + 0.5);
}

/* Append the due times of the walk's indices in (lo, hi] of node [lo, hi],
 * in order, entering only the children that hold one. */
static void fill(struct sched *s, const struct walk *wk, uint64_t lo, uint64_t hi, double s_lo,
		 double s_hi)
{
	if (!walk_in(wk, lo, hi))
		return;
	if (hi - lo == 1) { /* a leaf: its one index is hi */
		s->buf[s->buf_len++] = due_of(s, s_hi);
		return;
	}
	double m = node_mid(s, lo, hi, s_lo, s_hi);
	if (hi - lo == 2) { /* two leaves: lo + 1 and hi */
		if (walk_in(wk, lo, lo + 1))
			s->buf[s->buf_len++] = due_of(s, m);
		if (walk_in(wk, lo + 1, hi))
			s->buf[s->buf_len++] = due_of(s, s_hi);
		return;
	}
	uint64_t mid = lo + (hi - lo) / 2;
	fill(s, wk, lo, mid, s_lo, m);
	fill(s, wk, mid, hi, m, s_hi);
}

/* Due times of the walk's indices (S indices: arrival i is S_{i+1}) into
 * buf: S_1 is the top's first; the rest fall in top nodes [2^k, 2^(k+1)],
 * each walked from its ends. */
static void walk_fill(struct sched *s, const struct walk *wk)
{
	s->buf_pos = s->buf_len = 0;
	if (wk->from == 1)
		s->buf[s->buf_len++] = due_of(s, top_at(s, 0));
	uint32_t k = 63u - (uint32_t)__builtin_clzll(wk->from);
	if (k && wk->from == 1ull << k)
		k--; /* a top index ends the node before */
	for (; k + 1 < SCHED_TOP_MAX; k++) {
		uint64_t lo = 1ull << k;
		if (lo >= wk->to)
			break;
		fill(s, wk, lo, lo << 1, top_at(s, k), top_at(s, k + 1));
	}
}

/* ---- schedules ----------------------------------------------------------- */

void sched_init(struct sched *s, enum sched_arrival arrival, double rate_per_s, uint64_t start_ns,
		double phase, uint64_t seed)
{
	s->arrival = arrival;
	s->interval_ns = 1e9 / rate_per_s;
	s->start_ns = start_ns;
	s->offset_ns = phase * s->interval_ns;
	s->k = 0;
	s->lane = 0;
	s->stride = 1;
	s->key = seed;
	s->n_top = s->buf_pos = s->buf_len = 0;
	s->burst = 1;
	s->gbase = 0;
}

void sched_set_burst(struct sched *s, uint32_t n)
{
	s->burst = n ? n : 1;
	s->offset_ns *= s->burst;
	s->interval_ns *= s->burst; /* the bursts' gap */
	s->buf_pos = s->buf_len = 0;
}

/* sched_next with bursts: the due time of this arrival's burst. */
static uint64_t burst_next(struct sched *s)
{
	uint64_t g = sched_index(s) / s->burst;
	s->k++;
	if (s->arrival != SCHED_POISSON)
		return s->start_ns + (uint64_t)llround(s->offset_ns + (double)g * s->interval_ns);
	if (!s->buf_len || g < s->gbase || g - s->gbase >= s->buf_len) {
		/* the next SCHED_BUF bursts of the whole stream of bursts; only
		 * this one when the lane's arrivals are many bursts apart (the
		 * rest would be walked for nothing) */
		uint64_t n = s->stride / s->burst > 16 ? 1 : SCHED_BUF;
		struct walk wk = {.from = g + 1, .to = g + 1 + n, .stride = 1};
		walk_fill(s, &wk);
		s->gbase = g;
	}
	return s->start_ns + s->buf[g - s->gbase];
}

void sched_init_lane(struct sched *s, enum sched_arrival arrival, double rate_per_s,
		     uint64_t start_ns, uint64_t seed, uint32_t lane, uint32_t stride)
{
	sched_init(s, arrival, rate_per_s, start_ns, 0, seed);
	s->stride = stride ? stride : 1;
	s->lane = lane < s->stride ? lane : 0;
}

/* Due time of arrival i after the start (Poisson), as sched_next rounds it
 * (for sched_count: one arrival's walk). */
static uint64_t poisson_due(struct sched *s, uint64_t i)
{
	struct walk wk = {.from = i + 1, .to = i + 2, .stride = 1};
	walk_fill(s, &wk);
	s->buf_len = 0;
	return s->buf[0];
}

uint64_t sched_next(struct sched *s)
{
	double t;
	if (s->burst > 1)
		return burst_next(s);
	if (s->arrival == SCHED_POISSON) {
		if (s->buf_pos == s->buf_len) {
			/* the lane's next arrivals: SCHED_BUF of the whole stream,
			 * fewer of a lane of a large stride (each costs more), so
			 * that a refill stays a short pause of the loop */
			uint32_t lg = 31u - (uint32_t)__builtin_clz(s->stride);
			uint64_t n = SCHED_BUF / (1 + lg);
			struct walk wk = {.from = sched_index(s) + 1, .stride = s->stride};
			wk.to = wk.from + n * s->stride;
			walk_fill(s, &wk);
		}
		s->k++;
		return s->start_ns + s->buf[s->buf_pos++];
	}
	if (s->stride > 1)
		t = s->offset_ns + (double)sched_index(s) * s->interval_ns;
	else
		t = s->offset_ns + (double)s->k * s->interval_ns;
	s->k++;
	return s->start_ns + (uint64_t)llround(t);
}

/* How many of s's arrivals (a fresh global schedule: lane 0, stride 1,
 * phase 0) are due less than window_ns after its start; with bursts, how
 * many bursts. */
static uint64_t count_of(struct sched *s, uint64_t window_ns)
{
	enum sched_arrival arrival = s->arrival;
	if (arrival == SCHED_POISSON) {
		/* due times only grow: the first arrival due at or after the
		 * window's end, by doubling, then bisecting */
		if (poisson_due(s, 0) >= window_ns)
			return 0;
		uint64_t ok = 0, past = 1; /* due(ok) < window <= due(past) */
		while (poisson_due(s, past) < window_ns) {
			ok = past;
			past = past * 2 + 1;
		}
		while (past - ok > 1) {
			uint64_t mid = ok + (past - ok) / 2;
			if (poisson_due(s, mid) < window_ns)
				ok = mid;
			else
				past = mid;
		}
		return past;
	}
	/* arrival k is due at llround(k * interval): start from the quotient,
	 * then settle the rounding at the edge exactly as sched_next rounds */
	double q = floor((double)window_ns / s->interval_ns);
	uint64_t n = q > 0 ? (uint64_t)q : 0;
	while (n > 0 && (uint64_t)llround((double)(n - 1) * s->interval_ns) >= window_ns)
		n--;
	while ((uint64_t)llround((double)n * s->interval_ns) < window_ns)
		n++;
	return n;
}

uint64_t sched_count(enum sched_arrival arrival, double rate_per_s, uint64_t seed,
		     uint64_t window_ns)
{
	struct sched s;
	sched_init(&s, arrival, rate_per_s, 0, 0, seed);
	return count_of(&s, window_ns);
}

uint64_t sched_count_bursts(enum sched_arrival arrival, double rate_per_s, uint32_t burst,
			    uint64_t seed, uint64_t window_ns)
{
	struct sched s;
	sched_init(&s, arrival, rate_per_s, 0, 0, seed);
	if (burst > 1)
		sched_set_burst(&s, burst);
	return (uint64_t)s.burst * count_of(&s, window_ns);
}

double sched_split_rate(double rate_per_s, uint32_t parts, uint32_t i)
{
	double whole = floor(rate_per_s);
	double frac = rate_per_s - whole;
	double share = (double)sched_split((uint64_t)whole, parts, i);
	if (i == 0)
		share += frac;
	return share;
}
