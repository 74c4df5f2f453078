# syntax=docker/dockerfile:1
# The Switchyard gateway image: production dependencies installed in a full Node image (which
# has the compilers better-sqlite3 falls back to), the sources compiled to plain JavaScript in
# another (`npm run build`, docs/architecture.md), both copied into a slim runtime that runs as
# the unprivileged `node` user. The image holds the build, not the sources, so the CLI runs it.

FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# `prepare` runs the build script, which skips the build without TypeScript (a dev dependency).
COPY scripts ./scripts
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
# `npm ci` builds dist/ through `prepare`; the build fails the image on a type error.
RUN npm ci --no-audit --no-fund && test -f dist/BUILD

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json package-lock.json ./
COPY bin ./bin
COPY catalog ./catalog
COPY console/dist ./console/dist
# The default SQLite database lives under ./data (a single instance without DATABASE_URL).
RUN mkdir data && chown node:node data
USER node
EXPOSE 8080
# Liveness only: /readyz also answers 503 while the database is away or the process drains,
# which a load balancer should act on but a container supervisor should not restart for.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# `node` is PID 1 and receives SIGTERM itself (drain, then exit 0). Other commands run the
# CLI: `docker run --rm <image> accounts list`.
ENTRYPOINT ["node", "bin/switchyard.js"]
CMD ["start"]
