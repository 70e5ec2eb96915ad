/* engine_open's checks of the hosts (src/engine/engine.c): at most
 * ENGINE_MAX_HOSTS, every request naming a host that is there, one host
 * from addr when n_hosts is 0; and of the request names: at most
 * RESULT_MAX_NAMES + 1, every request's name index below n_names. Nothing
 * connects until a step starts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "net/sock.h"

static const char wire[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

static struct engine_cfg base_cfg(const struct engine_req *reqs, size_t n)
{
	struct engine_cfg c = {
		.reqs = reqs,
		.n_reqs = n,
		.concurrency = 2,
		.threads = 2,
		.timeout_ns = 1000000000ull,
	};
	net_resolve("127.0.0.1", 9, &c.addr, NULL);
	return c;
}

static void test_one_host_from_addr(void **state)
{
	(void)state;
	struct engine_req r[2] = {{wire, sizeof wire - 1, false, 0, 0}, {wire, sizeof wire - 1, false, 0, 0}};
	struct engine_cfg c = base_cfg(r, 2);
	struct engine *e = NULL;
	assert_int_equal(engine_open(&e, &c), 0);
	engine_close(e);
	r[1].host = 1; /* no second host */
	assert_int_equal(engine_open(&e, &c), -EINVAL);
}

static void test_hosts_checked(void **state)
{
	(void)state;
	static struct engine_host hosts[ENGINE_MAX_HOSTS + 1];
	for (int i = 0; i <= ENGINE_MAX_HOSTS; i++)
		net_resolve("127.0.0.1", (uint16_t)(1000 + i), &hosts[i].addr, NULL);
	struct engine_req r[3] = {{wire, sizeof wire - 1, false, 0, 0},
				  {wire, sizeof wire - 1, false, 2, 0},
				  {wire, sizeof wire - 1, false, 1, 0}};
	struct engine_cfg c = base_cfg(r, 3);
	c.hosts = hosts;
	c.n_hosts = 3;
	struct engine *e = NULL;
	assert_int_equal(engine_open(&e, &c), 0);
	engine_close(e);

	c.n_hosts = 2; /* request 1 names host 2 */
	assert_int_equal(engine_open(&e, &c), -EINVAL);
	c.n_hosts = ENGINE_MAX_HOSTS;
	c.open_loop = true;
	c.connections = 1; /* fewer connections than hosts is allowed */
	assert_int_equal(engine_open(&e, &c), 0);
	engine_close(e);
	c.n_hosts = ENGINE_MAX_HOSTS + 1;
	assert_int_equal(engine_open(&e, &c), -EINVAL);
	c.n_hosts = 3;
	c.hosts = NULL;
	assert_int_equal(engine_open(&e, &c), -EINVAL);
}

static void test_names_checked(void **state)
{
	(void)state;
	struct engine_req r[3] = {{wire, sizeof wire - 1, false, 0, 0},
				  {wire, sizeof wire - 1, false, 0, 2},
				  {wire, sizeof wire - 1, false, 0, 1}};
	struct engine_cfg c = base_cfg(r, 3);
	struct engine *e = NULL;
	c.n_names = 3;
	assert_int_equal(engine_open(&e, &c), 0);
	engine_close(e);
	c.n_names = 2; /* request 1 has name 2 */
	assert_int_equal(engine_open(&e, &c), -EINVAL);
	c.n_names = 1; /* one name: indexes are not read */
	assert_int_equal(engine_open(&e, &c), 0);
	engine_close(e);
	c.n_names = RESULT_MAX_NAMES + 1;
	assert_int_equal(engine_open(&e, &c), 0);
	engine_close(e);
	c.n_names = RESULT_MAX_NAMES + 2;
	assert_int_equal(engine_open(&e, &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_host_from_addr),
		cmocka_unit_test(test_hosts_checked),
		cmocka_unit_test(test_names_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
