#!/usr/bin/env bash
# LocalStack runs this once its services are ready (/etc/localstack/init/ready.d).
# It stores the source's SASL password in Secrets Manager and the pipeline
# configuration in SSM, then deploys template.yaml with the SAM CLI
# (samlocal): the stack creates the checkpoint table, both functions, the
# schedule, the failed-invocations queue, the alarms and the dashboard.
# The bootstraps must have been built on the host first:
#   make build-lambda LAMBDA_ARCH=$(go env GOARCH)
set -euo pipefail

readonly project=/project
readonly stack=catchup
readonly sam_version=1.170.0 sam_local_version=1.71.0
log() { echo "catchup init: $*"; }

for fn in replicate dispatch; do
  if [[ ! -x "$project/bin/lambda/$fn/bootstrap" ]]; then
    log "missing $project/bin/lambda/$fn/bootstrap: run 'make build-lambda LAMBDA_ARCH=\$(go env GOARCH)' on the host, then restart"
    exit 1
  fi
done

log "secret and configuration"
secret_arn=$(awslocal secretsmanager create-secret --name catchup/source-kafka \
  --secret-string "$CATCHUP_SOURCE_PASSWORD" --query ARN --output text 2>/dev/null ||
  awslocal secretsmanager describe-secret --secret-id catchup/source-kafka --query ARN --output text)
config=$(cat <<YAML
pipelines:
  - name: local-dr
    source:
      name: local-source
      brokers: [$CATCHUP_SOURCE_BROKERS]
      sasl: {mechanism: PLAIN, username: replicator, password_secret_arn: "$secret_arn"}
    target:
      name: local-target
      brokers: [$CATCHUP_TARGET_BROKERS]
    topics: {include: ['demo\\..*']}
YAML
)
awslocal ssm put-parameter --name /catchup/config --type SecureString --overwrite --value "$config" >/dev/null
param_arn=$(awslocal ssm get-parameter --name /catchup/config --query Parameter.ARN --output text)

log "SAM CLI $sam_version (samlocal $sam_local_version)"
if [[ ! -x /tmp/sam/bin/samlocal ]]; then
  python3 -m venv /tmp/sam
  /tmp/sam/bin/pip install --quiet --disable-pip-version-check "aws-sam-cli==$sam_version" "aws-sam-cli-local==$sam_local_version"
fi

# sam build would run make in the container, which has no Go: deploy the
# bootstraps built on the host instead, one CodeUri per function.
work=$(mktemp -d)
awk -v dir="$project/bin/lambda" '
  /^  [A-Za-z]+:$/ { resource = $1; sub(":", "", resource) }
  /^      CodeUri: \.$/ {
    if (resource == "ReplicateFunction") { print "      CodeUri: " dir "/replicate"; next }
    if (resource == "DispatchFunction") { print "      CodeUri: " dir "/dispatch"; next }
  }
  /^    Metadata:$/ || /^      BuildMethod: makefile$/ { next }
  { print }
' "$project/template.yaml" >"$work/template.yaml"

log "deploy stack $stack"
(
  cd "$work"
  /tmp/sam/bin/samlocal deploy --template-file template.yaml --stack-name "$stack" --resolve-s3 \
    --capabilities CAPABILITY_IAM --no-confirm-changeset --no-fail-on-empty-changeset \
    --parameter-overrides \
      "ConfigParameterArn=$param_arn" \
      "PasswordSecretArns=$secret_arn" \
      "ScheduleMinutes=1" \
      "ReplicateTimeout=120" \
      "ReplicateConcurrency=4" \
      "MaxShards=4" \
      "ShardBytes=1048576"
)
log "deployed: $(awslocal cloudformation describe-stacks --stack-name "$stack" --query 'Stacks[0].Outputs[].[OutputKey,OutputValue]' --output text | tr '\t\n' '= ')"
