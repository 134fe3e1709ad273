#!/usr/bin/env bash
# bench/tcp_relay.sh in the layout of a CPU shared with the upstream (see
# there): relay, haproxy and nginx stream, per request, from one run.
exec "$(dirname "$0")/tcp_relay.sh" shared
