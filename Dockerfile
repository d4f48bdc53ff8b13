# syntax=docker/dockerfile:1
# rollout's image for those who build with Docker: docker build -t rollout:VERSION .
# `make image` builds the same image without Docker, reproducibly and with the version,
# revision and timestamps of the commit (internal/testkit/imagetool);
# internal/testkit/imagetool/dockerfile_test.go holds this file to the same binary path,
# user, directories and entrypoint.

# Pinned by tag only: pin it by digest (golang:1.26@sha256:...) where you build; the digest
# could not be looked up where this file was written (no registry access).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static: the final image has no libc and no loader.
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /rootfs/usr/local/bin/rollout ./cmd/rollout
# What a non-root process needs without a shell: a writable /tmp, its home and working
# directory, passwd and group naming it, and the CA bundle HTTPS (s3:// inputs) needs.
RUN mkdir -p /rootfs/etc/ssl/certs /rootfs/home/nonroot /rootfs/tmp /rootfs/work && \
    cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ca-certificates.crt && \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > /rootfs/etc/passwd && \
    printf 'root:x:0:\nnonroot:x:65532:\n' > /rootfs/etc/group && \
    chmod 1777 /rootfs/tmp && \
    chown 65532:65532 /rootfs/home/nonroot /rootfs/work

FROM scratch
COPY --from=build /rootfs/ /
ARG VERSION=unknown
ARG REVISION=unknown
LABEL org.opencontainers.image.title="rollout" \
      org.opencontainers.image.source="https://github.com/rollout-dev/rollout" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
ENV PATH=/usr/local/bin HOME=/home/nonroot
USER 65532:65532
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/rollout"]
