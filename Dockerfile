# The gateway image: Node 24 runs the TypeScript sources directly (type stripping), so the
# image holds the sources and the production dependencies, and no build step.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY src ./src
COPY config ./config
# Not root: the ports are above 1024 (map 25 to 2525 to run as an MX).
USER node
EXPOSE 2525 8025
# node is PID 1 and handles SIGTERM itself: no new mail, sessions in DATA and uploads in
# flight finish, then it exits (within smtp.closeTimeout + upload.closeTimeout + 5 s).
ENTRYPOINT ["node", "src/cli.ts"]
# Every setting from the environment: see config/gateway.container.yaml.
CMD ["start", "--config", "config/gateway.container.yaml"]
