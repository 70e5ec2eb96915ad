/* Tests of the script module (src/script): wrk's interface driven through
 * the engine's flow callbacks without an engine: the wrk table and
 * wrk.format's exact bytes, setup/thread:set giving each worker's state an
 * id, request() with a counter per worker (the first call made before the
 * load, sent first), response() and its second value, the mode and what
 * response() reads, done()'s summary and stats objects, and the bad
 * scripts: a compile error, a hook that is not a function, an error in a
 * hook, a request that is not one, an endless loop (the time limit) and
 * unbounded allocation (the memory cap), each one line naming the file and
 * line. sreq_check's verdicts on request bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>
#include <lauxlib.h>

#include "common/check.h"
#include "script/script.h"
#include "script/script_int.h"

#define URL "http://127.0.0.1:8080/base?q=1"

static char paths[16][64];
static int n_paths;

/* The text into a new temporary .lua file; its path (static storage). */
static const char *script_file(const char *text)
{
	char *p = paths[n_paths++ % 16];
	snprintf(p, 64, "/tmp/pacer-test-script-XXXXXX");
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	size_t n = strlen(text);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
	return p;
}

static struct script_cfg cfg_of(const char *path, uint32_t threads)
{
	static struct req_names names;
	return (struct script_cfg){
		.path = path,
		.url = URL,
		.threads = threads,
		.open_loop = true,
		.names = &names,
	};
}

static struct net_addr loopback(void)
{
	struct net_addr a = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&a.ss;
	in->sin_family = AF_INET;
	in->sin_port = htons(8080);
	in->sin_addr.s_addr = htonl(0x7f000001);
	a.len = sizeof *in;
	return a;
}

/* Load and start; fails the test with the message when either fails. */
static struct script *start(const char *text, uint32_t threads)
{
	const char *path = script_file(text);
	struct script_cfg cfg = cfg_of(path, threads);
	struct script *s = NULL;
	char err[SCRIPT_ERR_CAP];
	int rc = script_load(&s, &cfg, err, sizeof err);
	CHECK(rc == 0, "script_load: %s", err);
	struct net_addr a = loopback();
	rc = script_start(s, &a, err, sizeof err);
	CHECK(rc == 0, "script_start: %s", err);
	unlink(path);
	return s;
}

/* The load or start error of text (its file's name replaced by "F"). */
static void error_of(const char *text, const struct script_cfg *over, char *out, size_t cap)
{
	const char *path = script_file(text);
	struct script_cfg cfg = over ? *over : cfg_of(path, 1);
	cfg.path = path;
	if (!cfg.url)
		cfg.url = URL;
	struct script *s = NULL;
	char err[SCRIPT_ERR_CAP] = "";
	int rc = script_load(&s, &cfg, err, sizeof err);
	if (!rc) {
		struct net_addr a = loopback();
		rc = script_start(s, &a, err, sizeof err);
	}
	CHECK(rc != 0, "no error from %s", text);
	script_free(s);
	unlink(path);
	/* the path, as "F" */
	const char *base = path;
	char *at = strstr(err, base);
	if (at)
		snprintf(out, cap, "%.*sF%s", (int)(at - err), err, at + strlen(base));
	else
		snprintf(out, cap, "%s", err);
}

static struct sworker *worker(struct script *s, uint32_t i)
{
	return (struct sworker *)script_flow_states(s)[i];
}

/* A flow's request at start, as a string. */
static void flow_req(struct script *s, uint32_t w, uint32_t f, char *out, size_t cap)
{
	const struct engine_flow_ops *ops = script_flow_ops(s);
	assert_non_null(ops);
	struct engine_flow_next nx = {0};
	int rc = ops->start(script_flow_states(s)[w], f, 1000, &nx);
	CHECK(rc == 0, "start: %s", worker(s, w)->err);
	assert_int_equal(nx.op, ENGINE_FLOW_SEND);
	assert_int_equal(nx.at_ns, 1000);
	snprintf(out, cap, "%.*s", (int)nx.req->len, nx.req->buf);
}

static void test_static_request(void **state)
{
	(void)state;
	struct script *s = start("wrk.method = 'POST'\n"
				 "wrk.body = '{\"a\":1}'\n"
				 "wrk.headers['Content-Type'] = 'application/json'\n",
				 2);
	const struct script_info *in = script_info(s);
	assert_int_equal(in->mode, SCRIPT_STATIC);
	assert_null(script_flow_ops(s));
	char req[512];
	snprintf(req, sizeof req, "%.*s", (int)in->req_len, in->req);
	/* the fields sorted by name (every thread's state makes the same bytes) */
	assert_string_equal(req, "POST /base?q=1 HTTP/1.1\r\nContent-Type: application/json\r\n"
				 "Host: 127.0.0.1:8080\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
	assert_int_equal(strlen(in->sha256), 64);
	script_free(s);
}

static void test_format(void **state)
{
	(void)state;
	struct script *s =
		start("request = function()\n"
		      "  return wrk.format('PUT', '/x', {['X-A'] = '1', Host = 'h'}, 'body')\n"
		      "end\n",
		      1);
	assert_int_equal(script_info(s)->mode, SCRIPT_WRK);
	char req[512];
	flow_req(s, 0, 0, req, sizeof req);
	assert_string_equal(req, "PUT /x HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nContent-Length: 4\r\n\r\n"
				 "body");
	script_free(s);

	s = start(
		"request = function()\n"
		"  return wrk.format('GET', '/', {b = 2, A = 'x', c = 1.5, Z = 'z', ['Content-Length'] = 9,"
		" e = false})\n"
		"end\n",
		1);
	flow_req(s, 0, 0, req, sizeof req);
	assert_string_equal(req, "GET / HTTP/1.1\r\nA: x\r\nb: 2\r\nc: 1.5\r\n"
				 "Host: 127.0.0.1:8080\r\nZ: z\r\n\r\n");
	script_free(s);

	/* wrk's fields from the URL; a bad method is an error with its line */
	s = start(
		"assert(wrk.scheme == 'http' and wrk.host == '127.0.0.1' and wrk.port == '8080')\n"
		"assert(wrk.path == '/base?q=1' and wrk.method == 'GET')\n"
		"request = function() return wrk.format(nil, '/y') end\n",
		1);
	flow_req(s, 0, 0, req, sizeof req);
	assert_string_equal(req, "GET /y HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
	script_free(s);
	char err[SCRIPT_ERR_CAP];
	error_of("request = function()\n  return wrk.format('GE T', '/')\nend\n", NULL, err,
		 sizeof err);
	/* `return wrk.format(...)` is a tail call: the line is lost, and the
	 * place is where the hook was defined */
	assert_string_equal(err, "F:1: in request(): method 'GE T' is not a token");
	error_of("request = function()\n  local r = wrk.format('GE T', '/')\n  return r\nend\n",
		 NULL, err, sizeof err);
	assert_string_equal(err, "F:2: in request(): method 'GE T' is not a token");
}

/* setup() gives each thread an id, request() counts per thread; the first
 * request() call was made before the load and is the first sent; its
 * second value goes to response(). */
static void test_counter_per_thread(void **state)
{
	(void)state;
	struct script *s = start("local n = 0\n"
				 "function setup(thread)\n"
				 "  n = n + 1\n"
				 "  thread:set('id', n)\n"
				 "end\n"
				 "counter = 0\n"
				 "got = {}\n"
				 "function request()\n"
				 "  counter = counter + 1\n"
				 "  return wrk.format(nil, '/t' .. id .. '/' .. counter), counter\n"
				 "end\n"
				 "function response(status, headers, body, ctx)\n"
				 "  got[#got + 1] = status .. ':' .. tostring(ctx)\n"
				 "end\n",
				 2);
	char req[256];
	flow_req(s, 0, 0, req, sizeof req);
	assert_string_equal(req, "GET /t1/1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
	flow_req(s, 1, 0, req, sizeof req);
	assert_string_equal(req, "GET /t2/1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
	flow_req(s, 0, 1, req, sizeof req);
	assert_string_equal(req, "GET /t1/2 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
	flow_req(s, 0, 2, req, sizeof req);
	assert_string_equal(req, "GET /t1/3 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
	/* responses out of order: each flow's own ctx */
	const struct engine_flow_ops *ops = script_flow_ops(s);
	struct engine_flow_result r = {.status = 200, .ok = true};
	struct engine_flow_next nx = {0};
	assert_int_equal(ops->result(script_flow_states(s)[0], 1, &r, 5000, &nx), 0);
	assert_int_equal(nx.op, ENGINE_FLOW_END);
	r.status = 404;
	assert_int_equal(ops->result(script_flow_states(s)[0], 0, &r, 6000, &nx), 0);
	/* a transport error: no response() (as wrk) */
	struct engine_flow_result e = {.status = 0, .err = ERRK_TIMEOUT};
	assert_int_equal(ops->result(script_flow_states(s)[0], 2, &e, 7000, &nx), 0);
	assert_int_equal(nx.op, ENGINE_FLOW_END);
	lua_State *L = worker(s, 0)->st.L;
	assert_int_equal(luaL_dostring(L, "return table.concat(got, ',')"), 0);
	assert_string_equal(lua_tostring(L, -1), "200:2,404:1");
	lua_pop(L, 1);
	/* the main state reads a thread's globals (thread:get in done) */
	lua_State *M = s->main.L;
	assert_int_equal(luaL_dostring(M, "return 1"), 0);
	lua_pop(M, 1);
	assert_false(script_failed(s, req, sizeof req));
	script_free(s);
}

/* The request a flow hands the engine stays where it is while more flows
 * start (the engine sends it later): 300 flows under way at once. */
static void test_flows_stay(void **state)
{
	(void)state;
	struct script *s = start("n = 0\nfunction request()\n  n = n + 1\n"
				 "  return wrk.format(nil, '/' .. n)\nend\n",
				 1);
	const struct engine_flow_ops *ops = script_flow_ops(s);
	void *ws = script_flow_states(s)[0];
	const struct engine_req *first = NULL;
	for (uint32_t f = 0; f < 300; f++) {
		struct engine_flow_next nx = {0};
		assert_int_equal(ops->start(ws, f, f, &nx), 0);
		if (f == 0)
			first = nx.req;
	}
	assert_ptr_equal(first, &worker(s, 0)->flows[0]->req);
	char req[64];
	snprintf(req, sizeof req, "%.*s", (int)first->len, first->buf);
	assert_string_equal(req, "GET /1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
	script_free(s);
}

/* response() gets headers and body only when it reads them. */
static void test_uses_params(void **state)
{
	(void)state;
	static const struct {
		const char *fn;
		bool headers, body;
	} cases[] = {
		{"function response(status) end", false, false},
		{"function response(status, headers, body) end", false, false},
		{"function response(status, headers, body) return #body end", false, true},
		{"function response(s, h, b) x = h['X'] end", true, false},
		{"function response(s, h, b) x = h; y = b end", true, true},
		{"function response(...) end", true, true},
		{"function response(s, h, b) f = function() return b end end", false, true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct script *s = start(cases[i].fn, 1);
		const struct script_info *in = script_info(s);
		CHECK(in->want_headers == cases[i].headers && in->want_body == cases[i].body,
		      "%s: headers %d body %d", cases[i].fn, in->want_headers, in->want_body);
		script_free(s);
	}
}

/* done(summary, latency, requests): wrk's fields, latency in us. */
static void test_done(void **state)
{
	(void)state;
	struct script *s = start("function done(summary, latency, requests)\n"
				 "  local function eq(a, b, what)\n"
				 "    if math.abs(a - b) > 0.02 * math.abs(b) then\n"
				 "      error(what .. ' ' .. a .. ' not ' .. b)\n"
				 "    end\n"
				 "  end\n"
				 "  eq(summary.duration, 2000000, 'duration')\n"
				 "  eq(summary.requests, 3, 'requests')\n"
				 "  eq(summary.bytes, 300, 'bytes')\n"
				 "  eq(summary.errors.status, 1, 'status')\n"
				 "  eq(summary.errors.timeout, 2, 'timeout')\n"
				 "  eq(latency.min, 1000, 'min')\n"
				 "  eq(latency.max, 3000, 'max')\n"
				 "  eq(latency.mean, 2000, 'mean')\n"
				 "  eq(latency:percentile(50), 2000, 'p50')\n"
				 "  eq(#latency, 3, 'buckets')\n"
				 "  local v, n = latency(1)\n"
				 "  eq(v, 1000, 'first') eq(n, 1, 'first count')\n"
				 "  eq(requests.max, 2, 'per second')\n"
				 "end\n",
				 1);
	struct hist h;
	assert_int_equal(hist_init(&h, 7, 1ull << 40), 0);
	hist_record(&h, 1000000);
	hist_record(&h, 2000000);
	hist_record(&h, 3000000);
	uint64_t per_sec[] = {1, 2};
	struct script_summary sum = {.duration_ns = 2000000000ull,
				     .requests = 3,
				     .bytes = 300,
				     .err_status = 1,
				     .err_timeout = 2,
				     .latency = &h,
				     .per_sec = per_sec,
				     .n_per_sec = 2};
	char err[SCRIPT_ERR_CAP];
	int rc = script_done(s, &sum, err, sizeof err);
	CHECK(rc == 0, "done: %s", err);
	/* a done() that fails says so */
	sum.requests = 4;
	assert_int_not_equal(script_done(s, &sum, err, sizeof err), 0);
	CHECK(strstr(err, ":4: in done(): requests 4 not 3"), "%s", err);
	hist_free(&h);
	script_free(s);
}

/* Errors before the load: one line, the file and the line. */
static void test_load_errors(void **state)
{
	(void)state;
	char err[SCRIPT_ERR_CAP];
	error_of("request = function()\n  return wrk.format('GET', '/x'\nend\n", NULL, err,
		 sizeof err);
	assert_string_equal(err, "F:3: ')' expected (to close '(' at line 2) near 'end'");
	error_of("response = 5\n", NULL, err, sizeof err);
	assert_string_equal(err, "F: the global response is a number: wrk's hooks are functions");
	error_of("x = nil\nx.y = 1\n", NULL, err, sizeof err);
	assert_string_equal(err, "F:2: in the script's top level(): attempt to index global 'x' "
				 "(a nil value)");
	error_of("function init(args)\n  error('no ' .. args[1])\nend\n",
		 &(struct script_cfg){
			 .threads = 1, .args = (const char *const[]){"way"}, .n_args = 1},
		 err, sizeof err);
	assert_string_equal(err, "F:2: in init(): no way");
	error_of("function request()\n  return 42\nend\n", NULL, err, sizeof err);
	assert_string_equal(err, "F:1: in request(): it returned number, not a request (a string, "
				 "as wrk.format() makes)");
	error_of("function request()\n  return 'GET / HTTP/1.1\\r\\n'\nend\n", NULL, err,
		 sizeof err);
	assert_string_equal(err,
			    "F:1: in request(): it returned a string that is not a request: its "
			    "head does not end with an empty line");
	error_of("function setup(t)\n  t:nosuch()\nend\n", NULL, err, sizeof err);
	assert_string_equal(err, "F:2: in setup(): attempt to call method 'nosuch' (a nil value)");
}

/* Errors while the load runs: the flow's callback fails, script_failed
 * says where; the endless loop and the memory cap too. */
static void test_run_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		uint64_t limit_ns;
		size_t mem;
		const char *want; /* after the path */
	} cases[] = {
		{"n = 0\nfunction request()\n  n = n + 1\n  if n > 2 then error('boom ' .. n) end\n"
		 "  return wrk.format()\nend\n",
		 0, 0, ":4: in request(): boom 3"},
		{"n = 0\nfunction request()\n  n = n + 1\n  if n > 2 then return nil end\n"
		 "  return wrk.format()\nend\n",
		 0, 0,
		 ":2: in request(): it returned nil, not a request (a string, as wrk.format() "
		 "makes)"},
		{"n = 0\nfunction request()\n  n = n + 1\n  while n > 2 do end\n"
		 "  return wrk.format()\nend\n",
		 20000000, 0,
		 ":4: in request(): still running after 20 ms, the limit of one call "
		 "(--script-timeout; an endless loop?)"},
		{"n = 0\nt = {}\nfunction request()\n  n = n + 1\n"
		 "  while n > 2 do t[#t + 1] = string.rep('x', 100) .. #t end\n"
		 "  return wrk.format()\nend\n",
		 10000000000ull, 4u << 20, /* the cap first, even under valgrind */
		 ":5: in request(): the script's Lua state ran out of memory: it would "
		 "hold more than 4 MiB (--script-memory)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *path = script_file(cases[i].text);
		struct script_cfg cfg = cfg_of(path, 1);
		cfg.call_limit_ns = cases[i].limit_ns;
		cfg.mem_cap = cases[i].mem;
		struct script *s = NULL;
		char err[SCRIPT_ERR_CAP];
		assert_int_equal(script_load(&s, &cfg, err, sizeof err), 0);
		struct net_addr a = loopback();
		CHECK(script_start(s, &a, err, sizeof err) == 0, "%s", err);
		const struct engine_flow_ops *ops = script_flow_ops(s);
		void *ws = script_flow_states(s)[0];
		struct engine_flow_next nx = {0};
		/* the first request (made at start), the second, then the failure */
		assert_int_equal(ops->start(ws, 0, 1, &nx), 0);
		assert_int_equal(ops->start(ws, 1, 2, &nx), 0);
		assert_int_not_equal(ops->start(ws, 2, 3, &nx), 0);
		char msg[SCRIPT_ERR_CAP], want[SCRIPT_ERR_CAP];
		assert_true(script_failed(s, msg, sizeof msg));
		snprintf(want, sizeof want, "%s%s", path, cases[i].want);
		assert_string_equal(msg, want);
		script_free(s);
		unlink(path);
	}
}

/* sreq_check: what pacer can send as one request. */
static void test_sreq_check(void **state)
{
	(void)state;
	static const struct {
		const char *req;
		const char *why; /* NULL: fine */
	} cases[] = {
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", NULL},
		{"POST /p HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", NULL},
		{"GET / HTTP/1.1\n\n", NULL},
		{"", "an empty string"},
		{"GET /\r\n\r\n", "its request line has no target (METHOD /path HTTP/1.1)"},
		{"GET / HTTP/2\r\n\r\n", "its request line does not end in HTTP/1.1"},
		{"GET / HTTP/1.1\r\nbad line\r\n\r\n", "a header line is not 'Name: value'"},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		 "it has Transfer-Encoding (pacer sends bodies with Content-Length)"},
		{"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nabc",
		 "its body is shorter than its Content-Length"},
		{"POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nabc",
		 "bytes follow its body past its Content-Length"},
		{"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n",
		 "it holds more than one request (wrk's pipelining: pacer sends one request per call "
		 "and does not pipeline)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool head;
		const char *why = sreq_check(cases[i].req, strlen(cases[i].req), &head);
		if (!cases[i].why)
			CHECK(!why, "%s: %s", cases[i].req, why);
		else
			CHECK(why && !strcmp(why, cases[i].why), "%s: %s", cases[i].req,
			      why ? why : "(fine)");
	}
	bool head;
	assert_null(sreq_check("HEAD / HTTP/1.1\r\n\r\n", 19, &head));
	assert_true(head);
}

/* Closed loop: delay() before each request (a wait, then the request due
 * when it ends); open loop ignores it (the schedule decides). */
static void test_delay(void **state)
{
	(void)state;
	const char *path = script_file("function delay() return 15 end\n");
	struct script_cfg cfg = cfg_of(path, 1);
	cfg.open_loop = false;
	struct script *s = NULL;
	char err[SCRIPT_ERR_CAP];
	assert_int_equal(script_load(&s, &cfg, err, sizeof err), 0);
	struct net_addr a = loopback();
	assert_int_equal(script_start(s, &a, err, sizeof err), 0);
	assert_int_equal(script_info(s)->mode, SCRIPT_WRK);
	const struct engine_flow_ops *ops = script_flow_ops(s);
	void *ws = script_flow_states(s)[0];
	struct engine_flow_next nx = {0};
	assert_int_equal(ops->start(ws, 0, 1000, &nx), 0);
	assert_int_equal(nx.op, ENGINE_FLOW_WAIT);
	assert_int_equal(nx.at_ns, 1000 + 15000000);
	assert_int_equal(ops->wake(ws, 0, nx.at_ns, &nx), 0);
	assert_int_equal(nx.op, ENGINE_FLOW_SEND);
	assert_int_equal(nx.at_ns, 1000 + 15000000);
	script_free(s);
	cfg.open_loop = true;
	assert_int_equal(script_load(&s, &cfg, err, sizeof err), 0);
	assert_true(script_info(s)->delay_ignored);
	assert_int_equal(script_info(s)->mode, SCRIPT_STATIC);
	script_free(s);
	unlink(path);
}

/* A session: each step yields a request (named), a sleep moves its clock,
 * a response's body reaches the script, a failed step ends it failed; an
 * error in it names its line. */
static void test_session(void **state)
{
	(void)state;
	struct script *s = start("pacer.session(function(s)\n"
				 "  local st, h, body = s:post('/login', '{}', {name = 'login'})\n"
				 "  s:sleep(0.5)\n"
				 "  st = s:get('/x?q=' .. body, {headers = {A = 'b'}})\n"
				 "  if body == 'boom' then error('no ' .. st) end\n"
				 "end)\n",
				 1);
	assert_int_equal(script_info(s)->mode, SCRIPT_SESSION);
	assert_true(script_info(s)->want_body);
	const struct engine_flow_ops *ops = script_flow_ops(s);
	void *ws = script_flow_states(s)[0];
	struct req_names *names = s->cfg.names;
	struct engine_flow_next nx = {0};
	for (uint32_t f = 0; f < 3; f++) {
		assert_int_equal(ops->start(ws, f, 1000 + f, &nx), 0);
		assert_int_equal(nx.op, ENGINE_FLOW_SEND);
		assert_int_equal(nx.at_ns, 1000 + f);
		char req[256];
		snprintf(req, sizeof req, "%.*s", (int)nx.req->len, nx.req->buf);
		assert_string_equal(req, "POST /login HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
					 "Content-Length: 2\r\n\r\n{}");
		assert_string_equal(names->name[nx.req->name], "login");
		/* the response: its body to the script, then the sleep from it */
		static const char *const bodies[] = {"tok", "tok", "boom"};
		struct engine_flow_result r = {.status = 200,
					       .ok = true,
					       .body = bodies[f],
					       .body_len = strlen(bodies[f])};
		assert_int_equal(ops->result(ws, f, &r, 5000, &nx), 0);
		assert_int_equal(nx.op, ENGINE_FLOW_WAIT);
		assert_int_equal(nx.at_ns, 5000 + 500000000ull);
		assert_int_equal(ops->wake(ws, f, nx.at_ns, &nx), 0);
		assert_int_equal(nx.op, ENGINE_FLOW_SEND);
		assert_int_equal(nx.at_ns, 5000 + 500000000ull); /* due when the sleep ended */
		snprintf(req, sizeof req, "%.*s", (int)nx.req->len, nx.req->buf);
		char want[256];
		snprintf(want, sizeof want,
			 "GET /x?q=%s HTTP/1.1\r\nA: b\r\nHost: 127.0.0.1:8080\r\n\r\n", bodies[f]);
		assert_string_equal(req, want);
		assert_string_equal(names->name[nx.req->name], "GET /x"); /* the query left out */
	}
	/* flow 0: its step fails (404 against the success rule): ended, failed */
	struct engine_flow_result bad = {.status = 404, .ok = false};
	assert_int_equal(ops->result(ws, 0, &bad, 600000000ull, &nx), 0);
	assert_int_equal(nx.op, ENGINE_FLOW_END);
	assert_true(nx.failed);
	/* flow 1: it succeeds: ended at the response, not failed */
	struct engine_flow_result ok = {.status = 200, .ok = true, .body = "", .body_len = 0};
	assert_int_equal(ops->result(ws, 1, &ok, 700000000ull, &nx), 0);
	assert_int_equal(nx.op, ENGINE_FLOW_END);
	assert_false(nx.failed);
	assert_int_equal(nx.at_ns, 700000000ull);
	/* flow 2: the script raises after its step: the hook failed, its line */
	assert_int_not_equal(ops->result(ws, 2, &ok, 800000000ull, &nx), 0);
	char msg[SCRIPT_ERR_CAP];
	assert_true(script_failed(s, msg, sizeof msg));
	CHECK(strstr(msg, ":5: in session(): no 200"), "%s", msg);
	assert_int_equal(names->n, 2);
	script_free(s);
	req_names_free(names);
	memset(names, 0, sizeof *names);
}

/* A session's bad turns: a step with no options (fine), a yield of the
 * script's own, an endless loop: each after its first step, with its line. */
static void test_session_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{"pacer.session(function(s)\n  s:get('/')\n  coroutine.yield(1)\nend)\n",
		 ":3: in session(): a coroutine.yield() of the script's own reached pacer (yield "
		 "only inside coroutines the session makes)"},
		{"pacer.session(function(s)\n  s:get('/')\n  while true do end\nend)\n",
		 ":3: in session(): still running after 20 ms, the limit of one call "
		 "(--script-timeout; an endless loop?)"},
		{"pacer.session(function(s)\n  s:get('/')\n  s:get('/', 5)\nend)\n",
		 ":3: in session(): a step's options must be a table, not a number"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *path = script_file(cases[i].text);
		struct script_cfg cfg = cfg_of(path, 1);
		cfg.call_limit_ns = 20000000;
		struct script *s = NULL;
		char err[SCRIPT_ERR_CAP];
		assert_int_equal(script_load(&s, &cfg, err, sizeof err), 0);
		struct net_addr a = loopback();
		CHECK(script_start(s, &a, err, sizeof err) == 0, "%s", err);
		const struct engine_flow_ops *ops = script_flow_ops(s);
		void *ws = script_flow_states(s)[0];
		struct engine_flow_next nx = {0};
		assert_int_equal(ops->start(ws, 0, 1, &nx), 0);
		assert_int_equal(nx.op, ENGINE_FLOW_SEND);
		assert_string_equal(s->cfg.names->name[nx.req->name], "GET /");
		struct engine_flow_result ok = {
			.status = 200, .ok = true, .body = "", .body_len = 0};
		assert_int_not_equal(ops->result(ws, 0, &ok, 2, &nx), 0);
		char msg[SCRIPT_ERR_CAP], want[SCRIPT_ERR_CAP];
		assert_true(script_failed(s, msg, sizeof msg));
		snprintf(want, sizeof want, "%s%s", path, cases[i].want);
		assert_string_equal(msg, want);
		struct req_names *names = s->cfg.names;
		script_free(s);
		req_names_free(names);
		memset(names, 0, sizeof *names);
		unlink(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_request),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_counter_per_thread),
		cmocka_unit_test(test_uses_params),
		cmocka_unit_test(test_done),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_run_errors),
		cmocka_unit_test(test_sreq_check),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_flows_stay),
		cmocka_unit_test(test_session_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
