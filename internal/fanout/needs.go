package fanout

import "github.com/kafka-catchup/catchup/internal/awsapi"

// Needs returns the AWS operation the dispatcher sends besides the store's
// and the configuration's: one asynchronous Invoke of the replicate
// function per shard (LambdaInvoker).
func Needs() []awsapi.Need {
	return []awsapi.Need{{Service: "Lambda", Operation: "Invoke", Action: "lambda:InvokeFunction", Resource: awsapi.Function,
		By: "LambdaInvoker: the dispatcher invokes the replicate function once per shard"}}
}
