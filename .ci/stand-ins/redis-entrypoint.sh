#!/bin/sh
# The official redis image's entrypoint, in short: options alone run redis-server with them;
# redis-server runs as the redis user, owning /data. The official binary is built with
# protected mode off (it would refuse every client from another container); Debian's is not,
# so it is turned off here.
set -e
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
  set -- redis-server "$@"
fi
if [ "$1" = 'redis-server' ]; then
  shift
  set -- redis-server --protected-mode no "$@"
  if [ "$(id -u)" = '0' ]; then
    find . \! -user redis -exec chown redis '{}' +
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"
