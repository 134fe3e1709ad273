# shellcheck shell=bash disable=SC2154 # top: set by tests/lib.sh
# Helpers for tests/integration/tcp_*.sh (not a test: not executable).
# Source after tests/lib.sh and tests/fixtures/relay/relay.sh.
#   need_tcp_tools                  nginx, wrk, openssl or skip
#   make_test_certs                 -> $CERTS (tests/fixtures/tls/make-certs.sh)
#   start_nginx NAME PORT [CERT]    HTTP (HTTPS with CERT) upstream on
#                                   127.0.0.1:PORT; / answers "ok", other
#                                   paths are files in $TEST_TMP/NAME/html;
#                                   each request is a line of
#                                   $TEST_TMP/NAME/access.log: "URI ALPN"
#   nginx_requests NAME
#   run_wrk ARGS...                 -> WRK_REQUESTS, WRK_ERRORS (socket
#                                   errors), WRK_NON2XX; output in $WRK_OUT

need_tcp_tools() {
	"$top/mk/deps" tcp >/dev/null 2>&1 || true
	local t
	for t in nginx wrk openssl; do
		command -v "$t" >/dev/null || skip "$t is not installed (mk/deps tcp)"
	done
}

make_test_certs() {
	CERTS=$TEST_TMP/certs
	"$FIXTURES/tls/make-certs.sh" "$CERTS" || fail "cannot make test certificates"
}

start_nginx() {
	local name=$1 port=$2 cert=${3:-}
	local d=$TEST_TMP/$name ssl="" tls=""
	mkdir -p "$d/html" "$d/tmp"
	if [ -n "$cert" ]; then
		ssl=" ssl"
		tls="ssl_certificate $cert; ssl_certificate_key $CERTS/server.key;"
	fi
	cat >"$d/nginx.conf" <<CONF
user root;
worker_processes 1;
daemon off;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 4096; }
http {
	log_format uri_alpn '\$uri \$ssl_alpn_protocol';
	access_log $d/access.log uri_alpn;
	client_body_temp_path $d/tmp;
	proxy_temp_path $d/tmp;
	fastcgi_temp_path $d/tmp;
	uwsgi_temp_path $d/tmp;
	scgi_temp_path $d/tmp;
	keepalive_requests 10000000;
	server {
		listen 127.0.0.1:$port$ssl;
		$tls
		root $d/html;
		location = / { return 200 "ok\n"; }
	}
}
CONF
	bg nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log"
	wait_for 10 tcp_up "$port" ||
		{ cat "$d/error.log"; fail "nginx $name did not start"; }
}

nginx_requests() {
	local f=$TEST_TMP/$1/access.log
	[ -f "$f" ] && wc -l <"$f" || echo 0
}

run_wrk() {
	WRK_OUT=$TEST_TMP/wrk.$RANDOM.out
	wrk "$@" >"$WRK_OUT" 2>&1 || { cat "$WRK_OUT"; fail "wrk $*"; }
	WRK_REQUESTS=$(awk '/requests in/ { print $1 }' "$WRK_OUT")
	WRK_ERRORS=$(awk -F'[ ,]+' '/Socket errors/ { print $4 + $6 + $8 + $10 }' "$WRK_OUT")
	WRK_ERRORS=${WRK_ERRORS:-0}
	WRK_NON2XX=$(awk '/Non-2xx/ { print $NF }' "$WRK_OUT")
	WRK_NON2XX=${WRK_NON2XX:-0}
	[ -n "$WRK_REQUESTS" ] || { cat "$WRK_OUT"; fail "no request count from wrk"; }
}
