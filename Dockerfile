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
COPY --from=build /out/worker /out/c2flow /usr/local/bin/
ENV C2FLOW_PARAMS=/var/cache/c2flow/params
VOLUME /var/cache/c2flow
ENTRYPOINT ["/usr/local/bin/worker"]
