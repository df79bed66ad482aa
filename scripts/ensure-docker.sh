#!/usr/bin/env bash
# ensure-docker.sh — make sure this machine can run the Docker tests:
#
#   1. the docker CLI              (Debian package docker.io)
#   2. a static /bin/busybox       (Debian package busybox-static; the test
#                                   images are built FROM scratch around it)
#   3. a Docker engine that answers `docker version`
#
# Idempotent: what is there is left alone, and an engine that answers (or a
# dockerd that is still starting) never gets a second dockerd next to it.
# As root on Debian it installs and starts what is missing; otherwise it says
# what to do and exits 1.
#
# Environment:
#   DOCKER_WAIT    seconds to wait for a starting engine (default 30)
#   DOCKERD_LOG    log file of a dockerd started here (default
#                  /var/log/dockerd.log, or /tmp/dockerd.log if /var/log is
#                  not writable)
set -euo pipefail

WAIT=${DOCKER_WAIT:-30}
BUSYBOX=/bin/busybox
PIDFILE=/var/run/docker.pid

say() { echo "ensure-docker: $*"; }
die() { echo "ensure-docker: error: $*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }
can_apt() { is_root && command -v apt-get >/dev/null 2>&1; }

# engine_answers: a Docker engine answered `docker version` (client and
# server). Bounded, so a wedged engine does not hang the caller.
engine_answers() {
	timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

# busybox_static: /bin/busybox exists and is statically linked (a dynamic
# one cannot run in a FROM scratch image).
busybox_static() {
	[ -x "$BUSYBOX" ] || return 1
	# glibc's ldd says "not a dynamic executable" for a static binary (and
	# exits 1, hence the || true under pipefail).
	local out
	out=$(LC_ALL=C ldd "$BUSYBOX" 2>&1 || true)
	grep -qE 'not a dynamic executable|statically linked' <<<"$out"
}

# dockerd_running: a dockerd process exists, answering or not yet.
dockerd_running() {
	if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
		return 0
	fi
	command -v pgrep >/dev/null 2>&1 && pgrep -x dockerd >/dev/null 2>&1
}

# wait_for_engine SECONDS: poll until the engine answers or time runs out.
wait_for_engine() {
	local deadline=$((SECONDS + $1))
	while [ "$SECONDS" -lt "$deadline" ]; do
		engine_answers && return 0
		sleep 1
	done
	engine_answers
}

# --- 1 and 2: packages ---------------------------------------------------
missing=()
command -v docker >/dev/null 2>&1 || missing+=(docker.io)
busybox_static || missing+=(busybox-static)

if [ ${#missing[@]} -gt 0 ]; then
	if ! can_apt; then
		die "missing: ${missing[*]} — install them (as root: apt-get install -y ${missing[*]}) or run this script as root"
	fi
	say "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 update -qq || die "apt-get update failed"
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" || die "apt-get install ${missing[*]} failed"
	command -v docker >/dev/null 2>&1 || die "docker.io is installed but there is still no docker on PATH"
	busybox_static || die "busybox-static is installed but $BUSYBOX is not a static binary"
fi

# --- 3: an engine --------------------------------------------------------
if engine_answers; then
	say "ok: docker $(docker version --format '{{.Server.Version}}' 2>/dev/null) answers; $BUSYBOX is static"
	exit 0
fi

if [ -n "${DOCKER_HOST:-}" ]; then
	# Starting a local dockerd would not make a remote one answer.
	die "the engine at DOCKER_HOST=$DOCKER_HOST does not answer: $(timeout 10 docker version 2>&1 | tail -n 1)"
fi

if ! is_root; then
	if [ -S /var/run/docker.sock ]; then
		die "an engine is there but does not answer you: $(timeout 10 docker version 2>&1 | tail -n 1) — add yourself to the docker group (usermod -aG docker \$USER, then log in again) or run as root"
	fi
	die "no Docker engine runs; start one as root (sudo $0, or sudo service docker start)"
fi

if dockerd_running; then
	say "a dockerd is running but does not answer yet; waiting up to ${WAIT}s"
	wait_for_engine "$WAIT" && { say "ok: the engine answers"; exit 0; }
	die "a dockerd is running but has not answered in ${WAIT}s; not starting a second one — look at its log, or stop it and run this again"
fi

# The init script, where there is one, knows the distribution's settings.
if [ -x /etc/init.d/docker ] && command -v service >/dev/null 2>&1; then
	say "starting the engine: service docker start"
	if service docker start >/dev/null 2>&1 && wait_for_engine "$WAIT"; then
		say "ok: the engine answers"
		exit 0
	fi
	if dockerd_running; then
		die "service docker start launched a dockerd that has not answered in ${WAIT}s; see /var/log/docker.log"
	fi
	say "service docker start did not leave a dockerd running; starting dockerd directly"
fi

command -v dockerd >/dev/null 2>&1 || die "no dockerd on this machine (apt-get install -y docker.io)"
log=${DOCKERD_LOG:-/var/log/dockerd.log}
if ! { : >>"$log"; } 2>/dev/null; then
	log=/tmp/dockerd.log
fi
say "starting the engine: dockerd (log: $log)"
nohup dockerd >>"$log" 2>&1 </dev/null &
pid=$!
if wait_for_engine "$WAIT"; then
	say "ok: the engine answers (dockerd pid $pid)"
	exit 0
fi
echo "ensure-docker: last lines of $log:" >&2
tail -n 20 "$log" >&2 || true
if kill -0 "$pid" 2>/dev/null; then
	die "dockerd (pid $pid) has not answered in ${WAIT}s; it is left running — see $log"
fi
die "dockerd exited without answering; see $log"
