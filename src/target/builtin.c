/* The built-in plans. Each is YAML in the plan-file schema, loaded through
 * the same parser as user files; examples/plans/NAME.yaml holds the same
 * text (a unit test keeps them equal), to copy and edit. */
#include <errno.h>
#include <string.h>

#include "target/plan.h"
#include "util/err.h"

static const char hello_yaml[] =
	"# pacer serve --plan hello: a tiny fixed 200 on every path, as fast as possible.\n"
	"name: hello\n"
	"description: tiny 200 \"hello\" on every path and method, as fast as possible\n"
	"routes:\n"
	"  - path: /\n"
	"    prefix: true\n"
	"    headers:\n"
	"      Content-Type: text/plain\n"
	"    body: \"hello\\n\"\n";

static const char vast_ortb_mix_yaml[] =
	"# pacer serve --plan vast_ortb_mix: an ad server. Send about half\n"
	"#   GET /vast?placement=...    (VAST XML; an empty VAST when there is no ad)\n"
	"# and half\n"
	"#   POST /openrtb2/auction    (OpenRTB 2.x JSON bid response; 204 for no bid).\n"
	"# About 55 % of answers are filled; 0.5 % are errors; each request costs a\n"
	"# little CPU and has a lognormal latency with a tail.\n"
	"name: vast_ortb_mix\n"
	"description: ad serving, GET /vast (VAST XML) + POST /openrtb2/auction (OpenRTB JSON), ~55% fill, "
	"small CPU work, latency tail\n"
	"seed: 1\n"
	"routes:\n"
	"  - method: GET\n"
	"    path: /vast\n"
	"    latency: {dist: lognormal, p50: 2ms, p99: 20ms, cap: 1s}\n"
	"    work: 50us\n"
	"    status: {200: 0.995, 503: 0.005}\n"
	"    fill: 0.55\n"
	"    headers:\n"
	"      Content-Type: application/xml\n"
	"    body: |\n"
	"      <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"      <VAST version=\"4.2\"><Ad id=\"{{id}}\"><InLine><AdSystem>pacer</AdSystem>"
	"<AdTitle>pacer test ad</AdTitle>"
	"<Impression><![CDATA[http://127.0.0.1/imp?ad={{id}}&placement={{query:placement}}]]></Impression>"
	"<Creatives><Creative><Linear><Duration>00:00:15</Duration><MediaFiles>"
	"<MediaFile delivery=\"progressive\" type=\"video/mp4\" width=\"1280\" height=\"720\">"
	"<![CDATA[http://127.0.0.1/creative.mp4]]></MediaFile>"
	"</MediaFiles></Linear></Creative></Creatives></InLine></Ad></VAST>\n"
	"    nofill:\n"
	"      status: 200\n"
	"      body: |\n"
	"        <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"        <VAST version=\"4.2\"/>\n"
	"  - method: POST\n"
	"    path: /openrtb2/auction\n"
	"    latency: {dist: lognormal, p50: 3ms, p99: 30ms, cap: 1s}\n"
	"    work: 80us\n"
	"    status: {200: 0.995, 500: 0.005}\n"
	"    fill: 0.55\n"
	"    headers:\n"
	"      Content-Type: application/json\n"
	"    body: '{\"id\":\"{{id}}\",\"seatbid\":[{\"seat\":\"pacer\",\"bid\":[{\"id\":\"{{id}}-1\","
	"\"impid\":\"1\",\"price\":1.25,\"adm\":\"<VAST version=\\\"4.2\\\"/>\",\"crid\":\"pacer-1\","
	"\"w\":1280,\"h\":720}]}],\"cur\":\"USD\"}'\n"
	"    nofill:\n"
	"      status: 204\n";

static const char kv_yaml[] =
	"# pacer serve --plan kv: key-value lookups against a fixed table.\n"
	"#   GET /v1/getvalues?keys=key1,key42,nosuchkey\n"
	"# answers {\"key1\":\"...\",\"key42\":\"...\",\"nosuchkey\":null}. Keys key0..key99999\n"
	"# exist, each with a fixed 32-byte value; at most 64 keys per request.\n"
	"name: kv\n"
	"description: key-value lookups, GET /v1/getvalues?keys=key1,key2 (keys key0..key99999), JSON\n"
	"routes:\n"
	"  - method: GET\n"
	"    path: /v1/getvalues\n"
	"    work: 20us\n"
	"    headers:\n"
	"      Content-Type: application/json\n"
	"    kv:\n"
	"      param: keys\n"
	"      prefix: key\n"
	"      generate: 100000\n"
	"      value_size: 32\n";

static const char exec_yaml[] =
	"# pacer serve --plan exec: a slow endpoint on every path. Execution time is\n"
	"# lognormal (median 50 ms, 99th percentile 400 ms) plus 200 us of CPU, and\n"
	"# each answer reports it in Server-Timing: app;dur=<ms>.\n"
	"name: exec\n"
	"description: slow endpoint on every path, execution time tens to hundreds of ms, in "
	"Server-Timing\n"
	"routes:\n"
	"  - path: /\n"
	"    prefix: true\n"
	"    latency: {dist: lognormal, p50: 50ms, p99: 400ms, cap: 5s}\n"
	"    work: 200us\n"
	"    headers:\n"
	"      Content-Type: application/json\n"
	"    body: '{\"status\":\"done\",\"run\":{{seq}}}'\n";

static const struct target_builtin builtins[] = {
	{"hello", "tiny 200 \"hello\" on every path and method, as fast as possible", hello_yaml},
	{"vast_ortb_mix",
	 "ad serving, GET /vast (VAST XML) + POST /openrtb2/auction (OpenRTB JSON), ~55% fill, small CPU "
	 "work, latency tail",
	 vast_ortb_mix_yaml},
	{"kv", "key-value lookups, GET /v1/getvalues?keys=key1,key2 (keys key0..key99999), JSON", kv_yaml},
	{"exec", "slow endpoint on every path, execution time tens to hundreds of ms, in Server-Timing",
	 exec_yaml},
};

const struct target_builtin *target_plan_builtins(size_t *n)
{
	*n = sizeof builtins / sizeof builtins[0];
	return builtins;
}

int target_plan_builtin(const char *name, struct target_plan **out)
{
	*out = NULL;
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
		if (strcmp(builtins[i].name, name) != 0)
			continue;
		char src[64], err[256];
		strcpy(src, "builtin:");
		strncat(src, name, sizeof src - 9);
		int rc = target_plan_parse(builtins[i].yaml, strlen(builtins[i].yaml), src, out, err,
		                           sizeof err);
		/* a built-in that does not load is a bug the unit tests catch;
		 * keep PACER_EPARSE for "no such built-in" */
		return rc == -ENOMEM || rc == 0 ? rc : -EINVAL;
	}
	return PACER_EPARSE;
}
