# The gateway image: Node 24 runs the TypeScript sources directly (type stripping), so the
# image holds the sources and the production dependencies, and no build step.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY src ./src
COPY config ./config
USER node
EXPOSE 2525 8025
ENTRYPOINT ["node", "src/cli.ts"]
CMD ["start", "--config", "config/gateway.yaml"]
