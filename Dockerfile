# paysaga: one image for every role. The command picks it:
#
#   docker run IMAGE worker            the Temporal worker (the default)
#   docker run IMAGE api               the HTTP API
#   docker run IMAGE setup --wait 60   namespace and search attributes on the cluster
#   docker run IMAGE sandbox --config /etc/paysaga/sandbox.json --host 0.0.0.0 --data /var/lib/paysaga/sandbox
#   docker run IMAGE keys generate --out /var/lib/paysaga/keys --if-missing
#
# Everything is configured by environment variables (README.md, docs/operations.md). The image holds
# the compiled dist/ and the prebuilt workflow bundle, so nothing is compiled or bundled at start, and
# runs as the unprivileged `node` user under tini, which forwards signals to node and reaps children.

ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: every dependency, tsc, the workflow bundle; then only production dependencies ---
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The lockfile lists only the optional native packages of the platform it was made on, which `npm ci`
# refuses on any other; `npm install` then installs the locked versions and the platform's own.
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts/build-workflow-bundle.js ./scripts/
COPY common ./common
COPY platform ./platform
COPY provider ./provider
COPY sandbox ./sandbox
COPY store ./store
COPY workflows ./workflows
COPY activities ./activities
COPY client ./client
COPY workers ./workers
COPY api ./api
COPY cli ./cli
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# --- runtime ---
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
# Volumes mounted here start out owned by `node` (keys written by `paysaga keys generate`, the
# sandbox's state with `paysaga sandbox --data /var/lib/paysaga/sandbox`).
RUN mkdir -p /var/lib/paysaga/keys /var/lib/paysaga/sandbox && chown -R node:node /var/lib/paysaga
ENV NODE_ENV=production \
  PAYSAGA_REBUILD=0 \
  PAYSAGA_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
USER node
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/paysaga.js"]
CMD ["worker"]
