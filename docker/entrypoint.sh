#!/bin/sh
# The sqsemu image's entrypoint: other emulators' image conventions, then the command (sqsemu by default).
#
# - ElasticMQ's images read /opt/elasticmq.conf: mounted there (and SQSEMU_CONFIG not set), sqsemu reads it too
#   (docs/coming-from-elasticmq.md).
# - SQSEMU_COMPAT=localstack listens on LocalStack's port, 4566, unless SQSEMU_PORT was changed from the image's
#   9324 (docs/coming-from-localstack.md); the HEALTHCHECK follows the same rule.
set -e
if [ -z "${SQSEMU_CONFIG:-}" ] && [ -f /opt/elasticmq.conf ]; then
    export SQSEMU_CONFIG=/opt/elasticmq.conf
fi
if [ "${SQSEMU_COMPAT:-}" = "localstack" ] && [ "${SQSEMU_PORT:-9324}" = "9324" ]; then
    export SQSEMU_PORT=4566
fi
exec "$@"
