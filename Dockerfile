# syntax=docker/dockerfile:1
# The server as a container: the bundle `npm start` runs, its runtime dependencies, and the
# migrations it applies at start, as an unprivileged user. It needs a PostgreSQL (DATABASE_URL):
# the embedded one of `npm start` is left out of the image (see compose.yaml and docs/operations.md).
# glibc (Debian slim), not Alpine: uWebSockets.js and sharp ship binaries for glibc.
ARG NODE_IMAGE=node:20-slim

# Everything, to generate the Prisma client and bundle the server. No install scripts: the Prisma
# engines' would download binaries the generator does not need (scripts/prisma-generate.mjs).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY prisma ./prisma
COPY scripts ./scripts
COPY actors ./actors
COPY src ./src
COPY web ./web
COPY packages ./packages
RUN node scripts/prisma-generate.mjs && node scripts/build.mjs

# The runtime dependencies alone, without what a container does not run (the Prisma CLI, the
# embedded PostgreSQL, the bundler, binaries for other platforms: scripts/prune-dependencies.sh).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json scripts/prune-dependencies.sh ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && sh prune-dependencies.sh

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=9991 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/build ./build
COPY package.json ./
COPY prisma/migrations ./prisma/migrations
# uploads/ exists in the image so that a volume mounted there (deploy/compose.yaml shares one
# between the nodes) starts out the unprivileged user's, as /data does.
RUN mkdir -p /data/uploads && chown -R node:node /data
USER node
VOLUME /data
EXPOSE 9991
# Node's own fetch: the slim image has no curl. Ready means: database reachable, migrations applied.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/health/ready`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The same flags as `npm start`; node is PID 1 and gets SIGTERM itself for the graceful stop.
CMD ["node", "--max-semi-space-size=64", "build/main.mjs", "serve"]
