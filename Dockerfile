# c2flow worker and CLI image (CPU backend). A CUDA image builds with
# -tags cuda on an nvidia/cuda base instead (see the README).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -o /out/ ./cmd/worker ./cmd/c2flow

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
# An unprivileged user owns the parameter cache and nothing else: a
# compromised worker cannot write the binaries or the system.
RUN groupadd --system --gid 10001 c2flow \
 && useradd --system --uid 10001 --gid c2flow --home-dir /var/cache/c2flow --shell /usr/sbin/nologin c2flow \
 && mkdir -p /var/cache/c2flow/params && chown -R c2flow:c2flow /var/cache/c2flow
COPY --from=build /out/worker /out/c2flow /usr/local/bin/
ENV C2FLOW_PARAMS=/var/cache/c2flow/params
# Each container's own cache of the keys, downloaded from S3: never shared
# between hosts, so no host proves with keys the verifiers do not hold.
VOLUME /var/cache/c2flow
USER 10001:10001
ENTRYPOINT ["/usr/local/bin/worker"]
