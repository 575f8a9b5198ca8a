# syntax=docker/dockerfile:1
# One image for `mcpfleet controller` and `mcpfleet registry serve` (docs/image.md):
#   docker build -t ghcr.io/mcpfleet/mcpfleet:$(node -p 'require("./package.json").version') .
# Node 24 LTS, production dependencies only, a non-root user, and nothing written outside /tmp
# (so it runs with a read-only root file system and an emptyDir at /tmp).

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY . .
RUN scripts/image-tree.sh /out

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# Node's compile cache lives in the temporary directory; without a writable one it is skipped.
ENV TMPDIR=/tmp
# A container runs one command: a validate server started by `validate` would serve no one.
ENV MCPFLEET_VALIDATE_SERVER=off
COPY --from=build /out /opt/mcpfleet
# `mcpfleet` on PATH, for CI jobs that use the image with their own entrypoint.
RUN ln -s /opt/mcpfleet/bin/mcpfleet.js /usr/local/bin/mcpfleet
# The controller and the registry fetch git repositories with the system git, and ssh for
# ssh:// and user@host:path ones (docs/gitops.md); curl in git checks https:// servers against
# the system's CA certificates. ssh refuses to run for a user with no passwd entry, so 65532
# gets one, with /tmp as its home (the only writable place).
RUN apt-get update \
 && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && echo "mcpfleet:x:65532:65532:mcpfleet:/tmp:/usr/sbin/nologin" >>/etc/passwd \
 && echo "mcpfleet:x:65532:" >>/etc/group
ENV HOME=/tmp
# 65532: the non-root user distroless images use; no shell login, no home to write.
USER 65532:65532
WORKDIR /opt/mcpfleet
# Node is PID 1 without a shell in front: SIGTERM reaches the command, which shuts down
# gracefully (the controller finishes the apply step in flight, the registry drains requests).
ENTRYPOINT ["node", "/opt/mcpfleet/bin/mcpfleet.js"]
CMD ["--help"]
