/* Tests of --metrics-listen's parser (metrics_listen_parse, src/metrics/
 * server.c): the accepted forms and the address and port they give, the
 * loopback rule and its --metrics-listen-any override, and one clear
 * message for each kind of bad value. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "metrics/server.h"

static void ok(const char *arg, bool any, const char *want)
{
	struct net_addr a;
	char err[256] = "", s[128];
	if (metrics_listen_parse(arg, any, &a, err, sizeof err))
		fail_msg("%s refused: %s", arg, err);
	assert_string_equal(net_addr_str(&a, s, sizeof s), want);
}

static void bad(const char *arg, bool any, const char *msg)
{
	struct net_addr a;
	char err[256] = "";
	assert_int_equal(metrics_listen_parse(arg, any, &a, err, sizeof err), -22);
	if (!strstr(err, msg))
		fail_msg("%s: message '%s' lacks '%s'", arg, err, msg);
	assert_non_null(strstr(err, arg)); /* names the value */
}

static void test_accepted(void **state)
{
	(void)state;
	ok("9100", false, "127.0.0.1:9100");
	ok(":9100", false, "127.0.0.1:9100");
	ok("127.0.0.1:0", false, "127.0.0.1:0");
	ok("127.1.2.3:65535", false, "127.1.2.3:65535");
	ok("localhost:80", false, "127.0.0.1:80");
	ok("[::1]:9100", false, "[::1]:9100");
	ok("0.0.0.0:9100", true, "0.0.0.0:9100");
	ok("[::]:1", true, "[::]:1");
}

static void test_refused(void **state)
{
	(void)state;
	bad("0.0.0.0:9100", false, "not a loopback address; add --metrics-listen-any");
	bad("10.1.2.3:9100", false, "not a loopback address");
	bad("[::]:9100", false, "not a loopback address");
	bad("127.0.0.1:65536", false, "expected a port 0..65535");
	bad("127.0.0.1:", false, "expected a port");
	bad("127.0.0.1:-1", false, "expected a port");
	bad("127.0.0.1:9x", false, "expected a port");
	bad("", false, "expected a port");
	bad("metrics.example:9100", true, "is not a numeric IPv4 or IPv6 address");
	bad("::1:9100", false, "write an IPv6 address as [ADDR]:PORT");
	bad("[::1]9100", false, "expected [ADDR]:PORT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
