# The gateway image. A build stage bundles the TypeScript sources to JavaScript (dist/,
# `npm run build`, scripts/build.ts): the daemon then runs without node's type stripper and
# loads less code, an idle daemon's memory is mostly that. The image holds dist/ and the
# production dependencies (the packages the bundle leaves in node_modules, and the rest).
#
# NODE_IMAGE is the base of both stages. Where a registry is reachable, pin it by digest so a
# rebuild takes the same bytes whatever the tag later points at:
#   docker build --build-arg NODE_IMAGE=node:24-slim@sha256:<digest> .
# (`docker buildx imagetools inspect node:24-slim` prints the digest). The default, the bare
# tag, is what a build without a registry (.ci/container's local stand-in) resolves.
ARG NODE_IMAGE=node:24-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The bundler is a development dependency; no install scripts are needed to run it. The
# patches of patches/ (mailsplit's line search, smtp-server's greetingDelay option; see
# patches/README.md) are applied before the bundle takes the patched packages in. The mock
# parsing API is a workspace of its own (packages/mock-parsing-api): npm ci needs its
# package.json, the bundle its sources.
COPY package.json package-lock.json ./
COPY packages/mock-parsing-api/package.json ./packages/mock-parsing-api/
COPY patches ./patches
RUN npm ci --ignore-scripts --no-audit --no-fund && npx patch-package --error-on-fail
COPY scripts/build.ts ./scripts/
COPY src ./src
COPY packages/mock-parsing-api/src ./packages/mock-parsing-api/src
RUN node scripts/build.ts

FROM ${NODE_IMAGE}
WORKDIR /app
# Two glibc malloc arenas instead of up to eight per core: node's few threads (libuv's pool
# hashing and reading files, V8's helpers) then share them, 6 MiB less idle and about 12 MiB
# less at a burst's peak (bench/README.md, "Memory"), no CPU cost measurable.
ENV NODE_ENV=production MALLOC_ARENA_MAX=2
# No install scripts: the bundle holds the patched packages already (the postinstall that
# patches them in development is a development tool), and none of the production
# dependencies needs one to run. The mock's workspace is named by the lockfile, so npm ci
# needs its package.json; its code is in dist/ already.
COPY package.json package-lock.json ./
COPY packages/mock-parsing-api/package.json ./packages/mock-parsing-api/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config ./config
# Not root: the ports are above 1024 (map 25 to 2525 to run as an MX). The user is numeric
# (node:24-slim's `node`, uid and gid 1000): with `runAsNonRoot: true` the kubelet refuses an
# image whose user is a name, since it cannot tell from a name that the user is not root.
USER 1000:1000
EXPOSE 2525 8025
# Liveness: /healthz answers without http.token, so the check needs no secret; node's fetch
# does the request, the slim image has no curl or wget. HTTP_PORT moves the API, and the
# check with it (empty counts as unset, as in the gateway). The gateway writes nothing to
# its filesystem, so the image runs with a read-only root filesystem and no writable mount.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HTTP_PORT || 8025) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 and handles SIGTERM itself: no new mail, sessions in DATA and uploads in
# flight finish, then it exits (within smtp.closeTimeout + upload.closeTimeout + 5 s).
# A young generation of 4 MiB per semi-space instead of V8's 16: twenty 10 MB messages at once
# then peak at about 140 MiB instead of 250-280 (buffers held across an await are promoted,
# and dead ones wait for a full collection), for a few percent more CPU (bench/README.md).
ENTRYPOINT ["node", "--max-semi-space-size=4", "dist/cli.js"]
# Every setting from the environment: see config/gateway.container.yaml.
CMD ["start", "--config", "config/gateway.container.yaml"]
