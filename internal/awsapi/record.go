package awsapi

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// Call is one AWS operation a client sent, as a Recorder saw it.
type Call struct {
	Service   string `json:"service"`   // the SDK's service id, "DynamoDB"
	Operation string `json:"operation"` // "BatchGetItem"
	Region    string `json:"region"`
	// Resources are the identifiers the request names: table names,
	// a function's name or ARN, a secret's ARN, a parameter's name, a
	// role's ARN.
	Resources []string `json:"resources"`
	// Path is the catchup code that sent it, innermost first:
	// "dynamostore.(*Store).batchGet", "dynamostore.(*Store).LoadPartitions", ...
	Path []string `json:"path"`
	// Role is the role whose credentials sign the call (AssumeRole), ""
	// for the process's own.
	Role string `json:"role,omitempty"`
}

// Recorder is an SDK middleware that records every operation sent through
// the clients it is registered on (aws.Config.APIOptions, or a client's
// Options.APIOptions): once per operation, before retries, with the
// resources its input names and the code that called it. It is safe for
// concurrent use.
type Recorder struct {
	mu    sync.Mutex
	w     io.Writer
	calls []Call
}

// NewRecorder returns a Recorder that keeps the calls (Calls) and, if w is
// not nil, writes each as a line of JSON to w.
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: w} }

// Register adds the recording middleware to stack; it has the signature
// of an element of aws.Config.APIOptions.
func (r *Recorder) Register(stack *middleware.Stack) error {
	// After the Initialize step's own middleware, which puts the service
	// and the operation on the context; before the retry loop.
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CatchupRecordCall",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			role, _ := middleware.GetStackValue(ctx, roleKey{}).(string)
			r.record(Call{
				Role:      role,
				Service:   awsmiddleware.GetServiceID(ctx),
				Operation: awsmiddleware.GetOperationName(ctx),
				Region:    awsmiddleware.GetRegion(ctx),
				Resources: resources(in.Parameters),
				Path:      callers(),
			})
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

func (r *Recorder) record(c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	if r.w != nil {
		b, _ := json.Marshal(c) // strings and slices of strings only
		_, _ = r.w.Write(append(b, '\n'))
	}
}

// Calls returns the calls recorded so far.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// identifierFields are the input fields by which AWS operations name the
// resource they act on; RequestItems (BatchGetItem, BatchWriteItem) is a
// map by table name.
var identifierFields = []string{"TableName", "FunctionName", "SecretId", "Name", "RoleArn", "KeyId"}

// resources returns the resource identifiers params names.
func resources(params any) []string {
	v := reflect.Indirect(reflect.ValueOf(params))
	if v.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for _, name := range identifierFields {
		f := v.FieldByName(name)
		if f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.String {
			out = append(out, f.Elem().String())
		}
	}
	if f := v.FieldByName("RequestItems"); f.IsValid() && f.Kind() == reflect.Map {
		for _, k := range f.MapKeys() {
			if k.Kind() == reflect.String {
				out = append(out, k.String())
			}
		}
	}
	slices.Sort(out)
	return out
}

const module = "github.com/kafka-catchup/catchup/"

// callers returns catchup's functions on the calling goroutine's stack,
// innermost first, without this package's (but AssumeRole's provider,
// which sends STS AssumeRole), each as package.function.
func callers() []string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var out []string
	for {
		f, more := frames.Next()
		name, ok := strings.CutPrefix(f.Function, module)
		// Range-over-func bodies and generic closures add no information.
		// This package's own frames but the role provider's say nothing of the caller.
		own := strings.HasPrefix(name, "internal/awsapi.") && name != "internal/awsapi.assumed.Retrieve"
		if ok && !own && !strings.Contains(name, "-range") && !strings.Contains(name, "[...]") {
			out = append(out, name[strings.LastIndex(name, "/")+1:])
		}
		if !more || len(out) == 6 {
			return out
		}
	}
}
