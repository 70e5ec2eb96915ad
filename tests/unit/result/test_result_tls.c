/* The TLS parts of phase_stats (src/result/result.c): failure reasons kept
 * distinct and bounded, merged across threads, the negotiated version, and
 * errors.tls outside the per-request errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "result/result.h"

static void test_reasons_distinct_and_bounded(void **state)
{
	(void)state;
	struct phase_stats p;
	assert_int_equal(phase_stats_init(&p), 0);
	phase_stats_tls_reason(&p, "a");
	phase_stats_tls_reason(&p, "a");
	phase_stats_tls_reason(&p, "");
	phase_stats_tls_reason(&p, NULL);
	assert_int_equal(p.n_tls_reasons, 1);
	phase_stats_tls_reason(&p, "b");
	phase_stats_tls_reason(&p, "c");
	phase_stats_tls_reason(&p, "d");
	phase_stats_tls_reason(&p, "e"); /* no room: dropped */
	assert_int_equal(p.n_tls_reasons, RESULT_TLS_REASONS);
	assert_string_equal(p.tls_reasons[0], "a");
	assert_string_equal(p.tls_reasons[3], "d");
	phase_stats_reset(&p);
	assert_int_equal(p.n_tls_reasons, 0);

	/* a long reason is cut at the cap, never inside a UTF-8 sequence */
	char longr[400];
	memset(longr, 'x', sizeof longr);
	memcpy(longr + RESULT_TLS_REASON_CAP - 3, "\xe2\x80\x94", 3); /* an em dash across the cut */
	longr[sizeof longr - 1] = '\0';
	phase_stats_tls_reason(&p, longr);
	size_t n = strlen(p.tls_reasons[0]);
	assert_int_equal(n, RESULT_TLS_REASON_CAP - 3);
	assert_int_equal(p.tls_reasons[0][n - 1], 'x');
	phase_stats_free(&p);
}

static void test_merge(void **state)
{
	(void)state;
	struct phase_stats a, b;
	assert_int_equal(phase_stats_init(&a), 0);
	assert_int_equal(phase_stats_init(&b), 0);
	a.tls_handshakes = 3;
	a.tls_resumed = 1;
	b.tls_handshakes = 5;
	b.tls_resumed = 4;
	strcpy(b.tls_version, "TLSv1.3");
	strcpy(b.tls_cipher, "TLS_AES_256_GCM_SHA384");
	phase_stats_tls_reason(&a, "x");
	phase_stats_tls_reason(&b, "x");
	phase_stats_tls_reason(&b, "y");
	b.errors[ERRK_TLS] = 2;
	b.errors[ERRK_CONNECT] = 1;
	b.errors[ERRK_READ] = 7;
	assert_int_equal(phase_stats_merge(&a, &b), 0);
	assert_int_equal(a.tls_handshakes, 8);
	assert_int_equal(a.tls_resumed, 5);
	assert_string_equal(a.tls_version, "TLSv1.3");
	assert_string_equal(a.tls_cipher, "TLS_AES_256_GCM_SHA384");
	assert_int_equal(a.n_tls_reasons, 2);
	assert_string_equal(a.tls_reasons[1], "y");
	assert_int_equal(phase_stats_transport_errors(&a), 10);
	assert_int_equal(phase_stats_request_errors(&a), 7); /* not connect, not tls */
	assert_string_equal(err_kind_name(ERRK_TLS), "tls");
	assert_string_equal(timing_name(TIM_HANDSHAKE), "handshake");
	phase_stats_free(&a);
	phase_stats_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reasons_distinct_and_bounded),
		cmocka_unit_test(test_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
