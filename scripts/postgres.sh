#!/usr/bin/env bash
# A throwaway PostgreSQL server for agentlog's team backend and its tests.
#
#   scripts/postgres.sh install        install PostgreSQL from Debian's packages when missing
#   scripts/postgres.sh start [DIR]    initdb in DIR, start on 127.0.0.1 on a free port, print the URL
#   scripts/postgres.sh url [DIR]      print the URL of the server running in DIR
#   scripts/postgres.sh stop [DIR]     stop the server in DIR and remove DIR
#
# DIR defaults to $AGENTLOG_PG_DIR, else ${TMPDIR:-/tmp}/agentlog-postgres.
#
# With AGENTLOG_PG_HUGE_PAGES=1 (the benchmarks set it), and as root, the
# server's shared memory is put on huge pages, as PostgreSQL's manual
# advises for a production server: reserved in the kernel for it
# (vm.nr_hugepages) and given back at stop. Each connection is a new
# process; on 4 kB pages it faults in every page of the shared buffers it
# reads (a search's first query at 1 GB was twice as slow as its second).
# `DIR/hugepages` then says how many MB the server holds on them.
# The server listens on loopback only (never 5432), with password
# (scram-sha-256) authentication; the superuser is `agentlog` with a random
# password, kept in DIR/password. initdb and postgres refuse to run as root:
# as root they run as the system user `agentlog-pg` (created when missing).
set -euo pipefail

cmd=${1:-}
dir=${2:-${AGENTLOG_PG_DIR:-${TMPDIR:-/tmp}/agentlog-postgres}}

die() { echo "postgres.sh: $*" >&2; exit 1; }

bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then echo "$d"; return 0; fi
  done
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return 0
  fi
  return 1
}

install() {
  bindir >/dev/null && return 0
  [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed and installing needs root: apt-get install postgresql"
  command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is not installed and there is no apt-get here"
  echo "installing PostgreSQL from Debian's packages" >&2
  # No cluster of the system's own on 5432: ours are started by this script.
  mkdir -p /etc/postgresql-common
  if [ ! -f /etc/postgresql-common/createcluster.conf ]; then
    echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
  fi
  local i
  for i in 1 2 3 4 5 6; do
    if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-contrib >/dev/null 2>&1; then
      break
    fi
    # dpkg may be locked by another install; wait and retry.
    sleep 10
    [ "$i" = 3 ] && apt-get update -qq >/dev/null 2>&1 || true
  done
  bindir >/dev/null || die "could not install PostgreSQL (apt-get install postgresql failed)"
}

# Runs a command as the user that owns the cluster.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u agentlog-pg -- "$@"
  else
    "$@"
  fi
}

free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
    [ "$p" = 5432 ] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

server_options="-c fsync=off -c max_connections=200 -c shared_buffers=256MB"

meminfo() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }
huge_kb() { meminfo Hugepagesize; }
# Huge pages in use or promised (total - free + reserved).
huge_in_use() {
  [ -r /proc/meminfo ] || { echo 0; return; }
  echo $(( $(meminfo HugePages_Total) - $(meminfo HugePages_Free) + $(meminfo HugePages_Rsvd) ))
}

# Reserves enough huge pages for the server's shared memory (as the server
# counts it), when asked and allowed; records how many were added so that
# stop gives them back.
reserve_huge_pages() {
  [ "${AGENTLOG_PG_HUGE_PAGES:-}" = 1 ] || return 0
  [ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/nr_hugepages ] || return 0
  local kb; kb=$(huge_kb); [ -n "$kb" ] && [ "$kb" -gt 0 ] || return 0
  local need; need=$(as_owner "$1/postgres" -D "$dir/data" $server_options \
    -C shared_memory_size_in_huge_pages 2>/dev/null) || return 0
  [ -n "$need" ] && [ "$need" -gt 0 ] 2>/dev/null || return 0
  local avail=$(( $(meminfo HugePages_Free) - $(meminfo HugePages_Rsvd) ))
  [ "$avail" -lt "$need" ] || return 0
  local total; total=$(cat /proc/sys/vm/nr_hugepages)
  echo $(( total + need - avail )) > /proc/sys/vm/nr_hugepages 2>/dev/null || return 0
  echo $(( $(cat /proc/sys/vm/nr_hugepages) - total )) > "$dir/hugepages-added"
}

start() {
  install
  local bin; bin=$(bindir)
  if [ -f "$dir/url" ] && [ -f "$dir/data/postmaster.pid" ]; then
    cat "$dir/url"; return 0
  fi
  if [ "$(id -u)" = 0 ] && ! id agentlog-pg >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin agentlog-pg 2>/dev/null \
      || id agentlog-pg >/dev/null 2>&1 || die "could not create the system user agentlog-pg"
  fi
  mkdir -p "$dir"
  chmod 700 "$dir"
  [ "$(id -u)" = 0 ] && chown agentlog-pg "$dir"
  local pw; pw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 20)
  as_owner sh -c "umask 077; printf '%s\n' '$pw' > '$dir/pwfile'"
  as_owner "$bin/initdb" -D "$dir/data" -U agentlog --pwfile="$dir/pwfile" \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed in $dir/data"; }
  reserve_huge_pages "$bin"
  local before; before=$(huge_in_use)
  local port ok=""
  for _ in 1 2 3 4 5; do
    port=$(free_port) || die "no free port on 127.0.0.1"
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir $server_options" \
        start >/dev/null 2>&1; then
      ok=1; break
    fi
  done
  [ -n "$ok" ] || { tail -20 "$dir/server.log" >&2 || true; die "the server did not start (log: $dir/server.log)"; }
  if [ "${AGENTLOG_PG_HUGE_PAGES:-}" = 1 ]; then
    echo $(( ($(huge_in_use) - before) * $(huge_kb) / 1024 )) > "$dir/hugepages"
  fi
  local url="postgres://agentlog:$pw@127.0.0.1:$port/agentlog"
  PGPASSWORD=$pw "$bin/psql" -q -h 127.0.0.1 -p "$port" -U agentlog -d postgres \
    -c "CREATE DATABASE agentlog" >/dev/null || die "could not create the database agentlog"
  as_owner sh -c "umask 077; printf '%s\n' '$pw' > '$dir/password'; printf '%s\n' '$url' > '$dir/url'"
  rm -f "$dir/pwfile"
  echo "$url"
}

stop() {
  [ -d "$dir" ] || return 0
  local bin; bin=$(bindir) || die "PostgreSQL is not installed"
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 \
      || as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [ -f "$dir/hugepages-added" ] && [ -w /proc/sys/vm/nr_hugepages ]; then
    local added total; added=$(cat "$dir/hugepages-added"); total=$(cat /proc/sys/vm/nr_hugepages)
    [ "$added" -gt 0 ] 2>/dev/null && echo $(( total > added ? total - added : 0 )) > /proc/sys/vm/nr_hugepages || true
  fi
  # Only remove what this script created.
  if [ -d "$dir/data" ] || [ -f "$dir/url" ]; then
    rm -rf "$dir"
  fi
}

case "$cmd" in
  install) install ;;
  start) start ;;
  url) [ -f "$dir/url" ] || die "no server started in $dir (run: $0 start)"; cat "$dir/url" ;;
  stop) stop ;;
  *) echo "usage: $0 install|start|url|stop [DIR]" >&2; exit 2 ;;
esac
