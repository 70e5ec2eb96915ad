#!/usr/bin/env bash
# Install the Debian packages pacer needs to build, test and benchmark, when
# they are missing. Non-interactive; run as root (or with sudo available).
set -euo pipefail

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
have_hdr() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ] || [ -e "/usr/include/aarch64-linux-gnu/$1" ]; }

have_cmd cc || need+=(gcc)
have_cmd make || need+=(make)
have_cmd pkg-config || need+=(pkg-config)
have_cmd git || need+=(git)
have_hdr cmocka.h || need+=(libcmocka-dev)
have_hdr yaml.h || need+=(libyaml-dev)
have_hdr jansson.h || need+=(libjansson-dev)
have_hdr openssl/sha.h || need+=(libssl-dev)
have_cmd python3 || need+=(python3)
[ -x /usr/sbin/nginx ] || need+=(nginx-light)
[ -e /usr/lib/nginx/modules/ngx_http_echo_module.so ] || need+=(libnginx-mod-http-echo)
have_cmd wrk || need+=(wrk)
# h2load: the fixed-rate peer of `make bench` (and the HTTP/2 one to come)
have_cmd h2load || need+=(nghttp2-client)
# perf: `make bench` shows where pacer's CPU per response goes
have_cmd perf || need+=(linux-perf)
# --metrics-listen is checked by promtool and scraped by a real Prometheus server
have_cmd prometheus || need+=(prometheus)
[ -x /usr/bin/time ] || need+=(time)
have_cmd clang || need+=(clang)
# make format (git clang-format) and make format-check
have_cmd clang-format || need+=(clang-format)
have_cmd valgrind || need+=(valgrind)
have_hdr zlib.h || need+=(zlib1g-dev)
# the run history (pacer --history, pacer history, pacer diff)
have_hdr sqlite3.h || need+=(libsqlite3-dev)
have_hdr nghttp2/nghttp2.h || need+=(libnghttp2-dev)
# HTTP/3 (--http3): QUIC by ngtcp2 with its GnuTLS crypto, HTTP/3 by nghttp3
have_hdr ngtcp2/ngtcp2.h || need+=(libngtcp2-dev)
have_hdr ngtcp2/ngtcp2_crypto_gnutls.h || need+=(libngtcp2-crypto-gnutls-dev)
have_hdr nghttp3/nghttp3.h || need+=(libnghttp3-dev)
have_hdr gnutls/gnutls.h || need+=(libgnutls28-dev)
# the HTTP/3 tests' outside server (caddy: HTTP/3 on by default) and the
# benchmark's HTTP/3 peer (ngtcp2's example client: Debian's h2load has no QUIC)
have_cmd caddy || need+=(caddy)
have_cmd gtlsclient || need+=(ngtcp2-client)
# tc netem in a network namespace of its own: the HTTP/3 loss test
have_cmd tc || need+=(iproute2)
# pacer run -s FILE.lua: wrk's scripting interface and sessions (src/script)
have_hdr luajit-2.1/lua.h || need+=(libluajit-5.1-dev)
have_cmd openssl || need+=(openssl)
# pacer k8s: the manifests are checked against Kubernetes' own Python models.
/usr/bin/python3 -c 'import kubernetes' 2>/dev/null || need+=(python3-kubernetes)
/usr/bin/python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
# make image and the container test: podman with runc (crun refuses a hybrid
# cgroup setup), netavark and aardvark-dns (names on the test's internal
# network; netavark drives iptables), debootstrap for the base from Debian's archive
have_cmd podman || need+=(podman)
[ -x /usr/sbin/runc ] || [ -x /usr/bin/runc ] || need+=(runc)
[ -x /usr/lib/podman/netavark ] || need+=(netavark)
[ -x /usr/lib/podman/aardvark-dns ] || need+=(aardvark-dns)
[ -x /usr/sbin/iptables ] || need+=(iptables)
[ -x /usr/sbin/debootstrap ] || need+=(debootstrap)
# The live view's tests watch pacer in a real terminal: tmux (capture-pane).
have_cmd tmux || need+=(tmux)
# Browser tests (HAR recording, HTML reports): Debian's Chromium driven over
# the DevTools protocol from Debian's Python with python3-websocket.
have_cmd chromium || need+=(chromium)
/usr/bin/python3 -c 'import websocket' 2>/dev/null || need+=(python3-websocket)
# The JSON result is validated against its schema with a standard validator.
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || need+=(python3-jsonschema)
# hlog output is decoded by HdrHistogram's own Java implementation.
[ -e /usr/share/java/hdrhistogram.jar ] || need+=(libhdrhistogram-java)
have_cmd javac || need+=(default-jdk-headless)
# The installed man pages are rendered by man(1) in test_install.
have_cmd man || need+=(man-db)

if [ ${#need[@]} -eq 0 ]; then
	exit 0
fi

echo "deps: installing Debian packages: ${need[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if have_cmd sudo; then SUDO="sudo"; else
		echo "deps: missing ${need[*]}; run as root: apt-get update && apt-get install -y ${need[*]}" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
