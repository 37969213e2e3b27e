package awsapi

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"
)

// EnvRecord is the test hook: when set to a file's path, Config records
// every AWS operation the clients made from its configuration send, one
// JSON Call per line appended to that file. Leave it unset in production.
const EnvRecord = "CATCHUP_AWS_RECORD"

// Config loads the SDK's default configuration (environment, shared files,
// web identity, container and instance roles) with opts, and, with
// CATCHUP_AWS_RECORD set, a Recorder appending to the file it names.
func Config(ctx context.Context, opts ...func(*config.LoadOptions) error) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if path := os.Getenv(EnvRecord); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return aws.Config{}, fmt.Errorf("%s: %w", EnvRecord, err)
		}
		// Left open for the life of the process, as the clients are.
		cfg.APIOptions = append(cfg.APIOptions, NewRecorder(f).Register)
	}
	return cfg, nil
}

// Kind is the kind of resource an operation acts on; it turns the
// identifier the request names (a table's name, a function's name or ARN,
// a secret's ARN, a parameter's name) into the ARN IAM evaluates.
type Kind string

// The kinds of resources catchup's requests name.
const (
	Table     Kind = "table"     // a DynamoDB table, by name
	Function  Kind = "function"  // a Lambda function, by name or ARN
	Secret    Kind = "secret"    // a Secrets Manager secret, by ARN (or name)
	Parameter Kind = "parameter" // an SSM parameter, by name or ARN
	Role      Kind = "role"      // an IAM role, by ARN
)

// ARN returns the ARN of the resource of kind k that id names, in
// partition, region and account; an id that is already an ARN is returned
// as it is.
func (k Kind) ARN(partition, region, account, id string) string {
	if strings.HasPrefix(id, "arn:") {
		return id
	}
	switch k {
	case Table:
		return fmt.Sprintf("arn:%s:dynamodb:%s:%s:table/%s", partition, region, account, id)
	case Function:
		return fmt.Sprintf("arn:%s:lambda:%s:%s:function:%s", partition, region, account, id)
	case Secret:
		return fmt.Sprintf("arn:%s:secretsmanager:%s:%s:secret:%s", partition, region, account, id)
	case Parameter:
		return fmt.Sprintf("arn:%s:ssm:%s:%s:parameter/%s", partition, region, account, strings.TrimPrefix(id, "/"))
	case Role:
		return fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, account, id)
	}
	return id
}

// Need is one AWS operation catchup sends, with the IAM action that
// authorizes it and the kind of resource it acts on.
type Need struct {
	// Service is the SDK's service id ("DynamoDB", "Lambda", "Secrets
	// Manager", "SSM", "STS"), Operation the API operation's name.
	Service, Operation string
	Action             string // the IAM action, "dynamodb:BatchGetItem"
	Resource           Kind
	// DecryptVia is, for an operation whose answer AWS decrypts for the
	// caller, the endpoint prefix of the service that does it ("ssm",
	// "secretsmanager"): when the resource is encrypted under a
	// customer-managed KMS key, that service calls kms:Decrypt on the key
	// in a forward access session, with the caller's permissions, so the
	// caller needs kms:Decrypt on the key, where kms:ViaService is
	// DecryptVia.REGION.amazonaws.com (and the key's policy must let the
	// account's IAM policies grant it, as the default key policy does).
	DecryptVia string
	// By names what sends it, for docs/permissions.md.
	By string
}

// Find returns the need of service's operation among needs.
func Find(needs []Need, service, operation string) (Need, bool) {
	for _, n := range needs {
		if n.Service == service && n.Operation == operation {
			return n, true
		}
	}
	return Need{}, false
}

// AssumeRole returns a copy of cfg whose credentials are those of the IAM
// role roleARN, assumed with STS AssumeRole (with externalID, if not
// empty) by cfg's own credentials, cached and refreshed before they
// expire. It reaches a resource in another account: a cross-account MSK
// cluster, a secret kept in a DR account. The STS client is made from
// cfg, so its AssumeRole requests are recorded with cfg's.
func AssumeRole(cfg aws.Config, roleARN, externalID string) aws.Config {
	out := cfg.Copy()
	p := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), roleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = "catchup"
		if externalID != "" {
			o.ExternalID = aws.String(externalID)
		}
	})
	out.Credentials = aws.NewCredentialsCache(assumed{p})
	// Calls made with these credentials are the role's, not the caller's:
	// a Recorder says so (Call.Role).
	out.APIOptions = append(slices.Clone(cfg.APIOptions), func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CatchupAssumedRole",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return next.HandleInitialize(middleware.WithStackValue(ctx, roleKey{}, roleARN), in)
			}), middleware.Before)
	})
	return out
}

// roleKey is the stack value of the role whose credentials sign a call.
type roleKey struct{}

// assumed puts AssumeRole on the stack of the AssumeRole requests, which
// the credentials cache sends from a goroutine of its own.
type assumed struct{ p *stscreds.AssumeRoleProvider }

func (a assumed) Retrieve(ctx context.Context) (aws.Credentials, error) {
	creds, err := a.p.Retrieve(ctx)
	return creds, err
}

// Needs returns the operation this package sends: STS AssumeRole, for a
// cluster's aws_role_arn (AssumeRole).
func Needs() []Need {
	return []Need{{Service: "STS", Operation: "AssumeRole", Action: "sts:AssumeRole", Resource: Role,
		By: "a cluster's sasl.aws_role_arn: its AWS_MSK_IAM signature and its password_secret_arn fetch, as that role"}}
}
