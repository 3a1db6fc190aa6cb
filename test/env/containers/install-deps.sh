#!/usr/bin/env bash
# What the container backend needs on this project's own machines (Debian, root, no Docker engine,
# no image registry): podman for its Docker-compatible API, buildah and busybox-static to build the
# broker images offline (./images/build.sh), and the files those images are built from
# (rabbitmq-server and its Erlang; Java and Maven for the jars, checked by the installer), plus the
# conformance suite's second AMQP and SQS clients. Runs the process backend's installer with this
# list, so the same rules apply (apt only as root, only what is missing).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
QS_DEBIAN_PACKAGES="podman buildah busybox-static rabbitmq-server unzip python3-pika python3-boto3" \
    exec bash "$here/../install-system-deps.sh"
