# The gateway image. A build stage bundles the TypeScript sources to JavaScript (dist/,
# `npm run build`, scripts/build.ts): the daemon then runs without node's type stripper and
# loads less code, an idle daemon's memory is mostly that. The image holds dist/ and the
# production dependencies (the packages the bundle leaves in node_modules, and the rest).
FROM node:24-slim AS build
WORKDIR /app
# The bundler is a development dependency; no install scripts are needed to run it. The
# patches of patches/ (mailsplit's line search, see patches/README.md) are applied before
# the bundle takes the patched packages in.
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --ignore-scripts --no-audit --no-fund && npx patch-package --error-on-fail
COPY scripts/build.ts ./scripts/
COPY src ./src
RUN node scripts/build.ts

FROM node:24-slim
WORKDIR /app
# Two glibc malloc arenas instead of up to eight per core: node's few threads (libuv's pool
# hashing and reading files, V8's helpers) then share them, 6 MiB less idle and about 12 MiB
# less at a burst's peak (bench/README.md, "Memory"), no CPU cost measurable.
ENV NODE_ENV=production MALLOC_ARENA_MAX=2
# No install scripts: the bundle holds the patched packages already (the postinstall that
# patches them in development is a development tool), and none of the production
# dependencies needs one to run.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config ./config
# Not root: the ports are above 1024 (map 25 to 2525 to run as an MX).
USER node
EXPOSE 2525 8025
# node is PID 1 and handles SIGTERM itself: no new mail, sessions in DATA and uploads in
# flight finish, then it exits (within smtp.closeTimeout + upload.closeTimeout + 5 s).
# A young generation of 4 MiB per semi-space instead of V8's 16: twenty 10 MB messages at once
# then peak at about 140 MiB instead of 250-280 (buffers held across an await are promoted,
# and dead ones wait for a full collection), for a few percent more CPU (bench/README.md).
ENTRYPOINT ["node", "--max-semi-space-size=4", "dist/cli.js"]
# Every setting from the environment: see config/gateway.container.yaml.
CMD ["start", "--config", "config/gateway.container.yaml"]
