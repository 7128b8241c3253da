# The c2flow image (CPU backend): the worker and the c2flow command (the
# Temporal server it embeds, S3, setup, submit) on a Debian base made from
# Debian's packages. No registry is needed: scripts/images.sh makes the base
# (debootstrap, docker import) and builds the binaries on the host into
# deploy/build/bin first (`make images` runs both, then compose's build).
# A CUDA image builds with -tags cuda on an NVIDIA base instead (README).
ARG BASE=c2flow-base:bookworm
FROM ${BASE}
# An unprivileged user owns the parameter cache and the S3 data and
# nothing else: a compromised worker cannot write the binaries or the system.
RUN groupadd --system --gid 10001 c2flow \
 && useradd --system --uid 10001 --gid c2flow --home-dir /var/cache/c2flow --shell /usr/sbin/nologin c2flow \
 && mkdir -p /var/cache/c2flow/params /var/lib/c2flow/s3 \
 && chown -R c2flow:c2flow /var/cache/c2flow /var/lib/c2flow
COPY deploy/build/bin/worker deploy/build/bin/c2flow /usr/local/bin/
ENV C2FLOW_PARAMS=/var/cache/c2flow/params
# Each container's own cache of the keys, downloaded from S3: never shared
# between hosts, so no host proves with keys the verifiers do not hold.
VOLUME /var/cache/c2flow
USER 10001:10001
ENTRYPOINT ["/usr/local/bin/worker"]
