package fanout

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// LambdaAPI is the Lambda call LambdaInvoker needs; *lambda.Client has it.
type LambdaAPI interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// LambdaInvoker invokes Function asynchronously (InvocationType Event):
// Lambda queues the event, answers 202 at once, runs the function, retries
// it twice if it returns an error, and then sends the event to the
// function's on-failure destination.
type LambdaInvoker struct {
	Client   LambdaAPI
	Function string // name or ARN
}

var _ Invoker = LambdaInvoker{}

// Invoke queues one invocation of Function with payload.
func (l LambdaInvoker) Invoke(ctx context.Context, payload []byte) error {
	_, err := l.Client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(l.Function),
		InvocationType: types.InvocationTypeEvent,
		Payload:        payload,
	})
	return err
}
