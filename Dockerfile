# iprecord serve in a container (docs/server.md, "Deployment"):
#   docker build -t iprecord .
#   docker run -d --name iprecord -p 8080:8080 -p 127.0.0.1:9464:9464 -v iprecord-data:/data iprecord
# The image holds the default data, compiled when it is built. Threat feeds
# and fresh geo and ASN data go in the /data volume, which the server
# watches: each build swapped in is answered from, the first included
# (compose.yaml runs an updater beside the servers):
#   docker run --rm -v iprecord-data:/data iprecord iprecord update
# Node 24, a long-term support line (maintained until April 2028), pinned to a release: a rebuild gets the same Node
# until this line is changed. Pin the digest too (node:24.21.0-bookworm-slim@sha256:...) where your registry allows.
FROM node:24.21.0-bookworm-slim AS build
# node-gyp builds the memory-map addon.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The package built once and packed as it is: the install below builds the addon and compiles the default data
# (install scripts off here: npm ci's would compile the data once more, for nothing, and npm pack would build again).
RUN npm ci --no-audit --no-fund --ignore-scripts && npm run build && npm pack --ignore-scripts --pack-destination /tmp
WORKDIR /opt/iprecord
RUN npm init -y > /dev/null && npm install --omit=dev --no-audit --no-fund /tmp/iprecord-*.tgz

FROM node:24.21.0-bookworm-slim
COPY --from=build /opt/iprecord /opt/iprecord
ENV PATH=/opt/iprecord/node_modules/.bin:$PATH XDG_DATA_HOME=/data PORT=8080
RUN mkdir -p /data/iprecord && chown -R node:node /data
USER node
VOLUME /data
EXPOSE 8080 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD node -e "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
CMD ["iprecord", "serve", "--host", "0.0.0.0", "--metrics-port", "9464"]
