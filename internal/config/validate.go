package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds checked by Validate.
const (
	maxBatchBytes    = 1 << 20 // the broker's default message.max.bytes is 1048588
	minFetchBytes    = 1 << 10
	maxFetchBytes    = 64 << 20
	minLeaseDuration = time.Minute
	// maxTakeoverSettle: two reads of a target's end further apart than
	// this say nothing more about a request still in flight.
	maxTakeoverSettle = 10 * time.Second
	// maxReplicationWait: a run that waits longer for a follower holds
	// back every other partition of its worker.
	maxReplicationWait = 10 * time.Minute
)

// Validate checks f, which should have its defaults set, and compiles the
// topic patterns that Topics.Match uses. It returns every problem at once,
// joined, one *Error each (without file positions: Parse adds those).
// Validate reads the file system to check that the files named by tls and
// password_file exist, relative to the working directory.
func (f *File) Validate() error {
	probs := f.check()
	if len(probs) == 0 {
		return nil
	}
	return f.render(probs, "", nil)
}

// checker collects problems by path.
type checker struct{ probs []problem }

func (c *checker) addf(path, format string, args ...any) {
	c.probs = append(c.probs, problem{path: path, msg: fmt.Sprintf(format, args...)})
}

// enum reports value at path unless it is one of valid.
func (c *checker) enum(path, value string, valid ...string) {
	if !slices.Contains(valid, value) {
		c.addf(path, "%q is not valid; use one of: %s", value, strings.Join(valid, ", "))
	}
}

func (f *File) check() []problem {
	var c checker
	if _, err := f.StoreLocation(); err != nil {
		c.addf("store", "%v", err)
	}
	if len(f.Pipelines) == 0 {
		c.addf("pipelines", "no pipelines: list at least one under pipelines:")
	}
	first := map[string]int{}
	for i := range f.Pipelines {
		p := &f.Pipelines[i]
		path := fmt.Sprintf("pipelines[%d]", i)
		if j, dup := first[p.Name]; dup && p.Name != "" {
			c.addf(path+".name", "%q is also the name of pipelines[%d]; names must be unique because each is a checkpoint namespace", p.Name, j)
		} else {
			first[p.Name] = i
		}
		p.check(&c, path)
	}
	return c.probs
}

func (p *Pipeline) check(c *checker, path string) {
	at := func(field string) string { return path + "." + field }
	switch {
	case p.Name == "":
		c.addf(at("name"), "required: the name is the checkpoint namespace, like a MirrorMaker group.id")
	case !isName(p.Name):
		c.addf(at("name"), "%q may hold only letters, digits, '.', '_' and '-'", p.Name)
	}
	p.Source.check(c, at("source"))
	p.Target.check(c, at("target"))
	renamed := p.TargetTopic != "" && p.TargetTopic != DefaultTargetTopic
	for _, b := range p.Source.Brokers {
		if slices.Contains(p.Target.Brokers, b) && !renamed {
			c.addf(at("target.brokers"), "%s is also a source broker; copying topics onto themselves would loop (set target_topic to copy under other names)", b)
		}
	}
	if p.TargetTopic != "" {
		rest := strings.NewReplacer("{topic}", "", "{source}", "").Replace(p.TargetTopic)
		switch {
		case !strings.Contains(p.TargetTopic, "{topic}"):
			c.addf(at("target_topic"), "%q must contain {topic}: copying several source topics into one target partition breaks the exact resume", p.TargetTopic)
		case rest != "" && !isName(rest):
			c.addf(at("target_topic"), "%q: besides {topic} and {source}, a topic name may hold only letters, digits, '.', '_' and '-'", p.TargetTopic)
		}
	}

	compiled := p.Topics.compile(func(field string, i int, err error) {
		c.addf(fmt.Sprintf("%s[%d]", at("topics."+field), i), "%v", err)
	})
	if len(p.Topics.Include) == 0 {
		c.addf(at("topics.include"), `select at least one topic: list regular expressions such as "orders\\..*"`)
	}

	if _, err := p.StartPolicy(); err != nil {
		c.addf(at("start"), "%v", err)
	}
	for topic, parts := range p.StartOffsets {
		tp := fmt.Sprintf("%s[%s]", at("start_offsets"), topic)
		if compiled && !p.Topics.Match(topic) {
			c.addf(tp, "topic %q is not selected by topics", topic)
		}
		for part, off := range parts {
			pp := fmt.Sprintf("%s[%d]", tp, part)
			if part < 0 {
				c.addf(pp, "partition %d is negative", part)
			}
			if off < 0 {
				c.addf(pp, "offset %d is negative", off)
			}
		}
	}

	nonNegative(c, at("window.max_records"), p.Window.MaxRecords)
	nonNegative(c, at("window.max_bytes"), p.Window.MaxBytes)
	nonNegative(c, at("window.max_duration"), p.Window.MaxDuration)
	if p.Window.MaxDuration >= p.LeaseDuration && p.LeaseDuration > 0 {
		c.addf(at("window.max_duration"), "%v is not shorter than lease_duration %v; a run that outlives its lease could copy alongside another run", p.Window.MaxDuration, p.LeaseDuration)
	}
	p.Producer.check(c, at("producer"))
	p.checkTopicCreation(c, path)

	c.enum(at("isolation"), p.Isolation, "read_committed", "read_uncommitted")
	c.enum(at("on_gap"), p.OnGap, "fail", "skip")
	if p.CommitInterval <= 0 {
		c.addf(at("commit_interval"), "%v must be positive", p.CommitInterval)
	} else if p.CommitInterval >= p.LeaseDuration {
		c.addf(at("commit_interval"), "%v is not shorter than lease_duration %v; the lease would expire between commits", p.CommitInterval, p.LeaseDuration)
	}
	if p.Parallelism < 1 {
		c.addf(at("parallelism"), "%d must be at least 1", p.Parallelism)
	}
	if p.FetchBytes < minFetchBytes || p.FetchBytes > maxFetchBytes {
		c.addf(at("fetch_bytes"), "%d must be from %d (1 KiB) to %d (64 MiB)", p.FetchBytes, minFetchBytes, maxFetchBytes)
	}
	if p.TakeoverSettle < 0 || p.TakeoverSettle > maxTakeoverSettle {
		c.addf(at("takeover_settle"), "%v must be from 0 (no wait) to %v", p.TakeoverSettle, maxTakeoverSettle)
	}
	if p.ReplicationWait < 0 || p.ReplicationWait > maxReplicationWait {
		c.addf(at("replication_wait"), "%v must be from 0 (no wait) to %v", p.ReplicationWait, maxReplicationWait)
	}
	if p.LeaseDuration < minLeaseDuration {
		c.addf(at("lease_duration"), "%v must be at least %v: the lease must outlive the longest run (a Lambda runs up to 15m)", p.LeaseDuration, minLeaseDuration)
	}
}

func nonNegative[T int64 | time.Duration](c *checker, path string, v T) {
	if v < 0 {
		c.addf(path, "%v is negative; use 0 for no limit", v)
	}
}

func (c *Cluster) check(ch *checker, path string) {
	at := func(field string) string { return path + "." + field }
	if !isName(c.Name) {
		ch.addf(at("name"), "%q must be non-empty and hold only letters, digits, '.', '_' and '-'", c.Name)
	}
	if len(c.Brokers) == 0 {
		ch.addf(at("brokers"), `list at least one broker as host:port, like "b-1.example.com:9092"`)
	}
	for i, b := range c.Brokers {
		if err := checkHostPort(b); err != nil {
			ch.addf(fmt.Sprintf("%s[%d]", at("brokers"), i), "%v", err)
		}
	}
	if c.ClientID == "" {
		ch.addf(at("client_id"), "must not be empty")
	}
	if c.DialTimeout < 0 {
		ch.addf(at("dial_timeout"), "%v is negative; give a duration such as 5s, or leave it out for %v", c.DialTimeout, DefaultDialTimeout)
	}
	if t := c.TLS; t != nil {
		if (t.CertFile == "") != (t.KeyFile == "") {
			ch.addf(at("tls"), "cert_file and key_file go together: set both for a client certificate, or neither")
		}
		for _, f := range []struct{ key, name string }{{"ca_file", t.CAFile}, {"cert_file", t.CertFile}, {"key_file", t.KeyFile}} {
			if err := checkFile(f.name); err != nil {
				ch.addf(at("tls."+f.key), "%v", err)
			}
		}
	}
	if c.SASL != nil {
		c.SASL.check(ch, at("sasl"), c.TLSEnabled())
	}
}

func (s *SASL) check(c *checker, path string, tls bool) {
	at := func(field string) string { return path + "." + field }
	if s.Mechanism != "OAUTHBEARER" {
		for _, f := range []struct{ key, value string }{{"token_file", s.TokenFile}, {"token_endpoint_url", s.TokenEndpointURL},
			{"client_id", s.ClientID}, {"scope", s.Scope}} {
			if f.value != "" {
				c.addf(at(f.key), "is used only with mechanism OAUTHBEARER")
			}
		}
	}
	if s.Mechanism != "GSSAPI" {
		s.checkNotKerberos(c, path)
	}
	switch s.Mechanism {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		if s.Username == "" {
			c.addf(at("username"), "required with mechanism %s", s.Mechanism)
		}
		switch n := count(s.PasswordEnv, s.PasswordFile, s.PasswordSecretARN); {
		case n == 0:
			c.addf(path, "mechanism %s needs a password: set password_env (an environment variable) or password_file, "+
				"or password_secret_arn (an AWS Secrets Manager secret, for the Lambda functions)", s.Mechanism)
		case n > 1:
			c.addf(path, "set only one of password_env, password_file and password_secret_arn")
		}
		s.checkSecretSources(c, path)
		if s.Region != "" {
			c.addf(at("region"), "is used only with mechanism AWS_MSK_IAM")
		}
	case "AWS_MSK_IAM":
		for _, f := range []struct{ key, value string }{{"username", s.Username}, {"password_env", s.PasswordEnv},
			{"password_file", s.PasswordFile}, {"password_secret_arn", s.PasswordSecretARN}} {
			if f.value != "" {
				c.addf(at(f.key), "is not used with AWS_MSK_IAM, which signs requests with AWS credentials")
			}
		}
		if !tls {
			c.addf(path, "AWS_MSK_IAM needs tls: MSK accepts IAM authentication only over TLS (port 9098); add tls: {}")
		}
	case "OAUTHBEARER":
		s.checkOAuth(c, path)
	case "GSSAPI":
		s.checkKerberos(c, path)
	default:
		c.enum(at("mechanism"), s.Mechanism, "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "AWS_MSK_IAM", "OAUTHBEARER", "GSSAPI")
	}
	switch r := s.AWSRoleARN; {
	case r != "" && (!strings.HasPrefix(r, "arn:") || !strings.Contains(r, ":iam::") || !strings.Contains(r, ":role/")):
		c.addf(at("aws_role_arn"), "%q is not an IAM role ARN (arn:aws:iam::ACCOUNT:role/NAME)", r)
	case r != "" && s.Mechanism != "AWS_MSK_IAM" && s.PasswordSecretARN == "":
		c.addf(at("aws_role_arn"), "is used only with mechanism AWS_MSK_IAM or password_secret_arn, the cluster's AWS calls")
	case r == "" && s.AWSExternalID != "":
		c.addf(at("aws_external_id"), "is used only with aws_role_arn")
	}
}

// checkOAuth checks an OAUTHBEARER block: a token file, or a token
// endpoint with a client id and one client secret.
func (s *SASL) checkOAuth(c *checker, path string) {
	at := func(field string) string { return path + "." + field }
	secrets := count(s.PasswordEnv, s.PasswordFile, s.PasswordSecretARN)
	for _, f := range []struct{ key, value string }{{"username", s.Username}, {"region", s.Region}} {
		if f.value != "" {
			c.addf(at(f.key), "is not used with OAUTHBEARER, which authenticates with a token")
		}
	}
	switch {
	case s.TokenFile == "" && s.TokenEndpointURL == "":
		c.addf(path, "mechanism OAUTHBEARER needs a token: set token_file (a file holding the token, read again at each "+
			"connection), or token_endpoint_url with client_id and the client secret in password_env, password_file or password_secret_arn")
	case s.TokenFile != "" && s.TokenEndpointURL != "":
		c.addf(path, "set only one of token_file and token_endpoint_url")
	case s.TokenFile != "":
		if err := checkFile(s.TokenFile); err != nil {
			c.addf(at("token_file"), "%v", err)
		}
		if secrets > 0 || s.ClientID != "" || s.Scope != "" {
			c.addf(path, "client_id, scope and the client secret (password_env, password_file, password_secret_arn) go with "+
				"token_endpoint_url, not token_file: remove them, or token_file")
		}
	default:
		if u, err := url.Parse(s.TokenEndpointURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			c.addf(at("token_endpoint_url"), "%q is not an http(s) URL; give the token endpoint, such as "+
				"https://keycloak.example.com/realms/kafka/protocol/openid-connect/token", s.TokenEndpointURL)
		} else if u.User != nil {
			c.addf(at("token_endpoint_url"), "holds credentials; give the client secret in password_env, password_file or password_secret_arn")
		}
		if s.ClientID == "" {
			c.addf(at("client_id"), "required with token_endpoint_url: the OAuth client catchup authenticates as")
		}
		switch secrets {
		case 0:
			c.addf(path, "token_endpoint_url needs the client secret: set password_env (an environment variable), password_file, "+
				"or password_secret_arn (an AWS Secrets Manager secret)")
		case 1:
		default:
			c.addf(path, "set only one of password_env, password_file and password_secret_arn")
		}
		s.checkSecretSources(c, path)
	}
}

// checkSecretSources checks that password_secret_arn is a Secrets Manager
// ARN and password_file a readable file, when set.
func (s *SASL) checkSecretSources(c *checker, path string) {
	if a := s.PasswordSecretARN; a != "" && (!strings.HasPrefix(a, "arn:") || !strings.Contains(a, ":secretsmanager:")) {
		if strings.HasPrefix(a, "arn:") {
			c.addf(path+".password_secret_arn", "%q is not a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME)", a)
		} else {
			// Not echoed: what is not an ARN at all may be the password.
			c.addf(path+".password_secret_arn", "is not a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME); "+
				"give the ARN of the secret that holds the password, never the password itself")
		}
	}
	if err := checkFile(s.PasswordFile); err != nil {
		if !isPathLike(s.PasswordFile) {
			// Not echoed: a name of a password's characters may be the password.
			err = errors.New("names no readable file; give the path of the file that holds the password, never the password itself")
		}
		c.addf(path+".password_file", "%v", err)
	}
	if v := s.PasswordEnv; v != "" && !isEnvName(v) {
		// Not echoed: what is not a variable name is most likely the password.
		c.addf(path+".password_env", "is not the name of an environment variable (letters, digits, '_', '.' and '-', "+
			"not starting with a digit); give the name of the variable that holds the password, never the password itself")
	}
}

// isPathLike reports whether s is made only of what file paths are
// usually made of (letters, digits, '/', '_', '.', '-', '~'), so that an
// error may repeat it: a generated password has other characters.
func isPathLike(s string) bool { return madeOf(s, "/_.-~") }

// isEnvName reports whether s can name an environment variable: a shell's
// names (letters, digits and '_', not starting with a digit), and the '.'
// and '-' that Kubernetes also allows.
func isEnvName(s string) bool {
	return s != "" && (s[0] < '0' || s[0] > '9') && madeOf(s, "_.-")
}

// madeOf reports whether every character of s is an ASCII letter, a digit
// or one of extra.
func madeOf(s, extra string) bool {
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', strings.ContainsRune(extra, r):
		default:
			return false
		}
	}
	return true
}

// Role returns the AWS role s names for its cluster's AWS calls, the zero
// AWSRole for the process's own credentials.
func (s *SASL) Role() AWSRole {
	return AWSRole{ARN: s.AWSRoleARN, ExternalID: s.AWSExternalID}
}

// AWSRole is an IAM role to assume, and the external id its trust policy
// asks for; the zero AWSRole means none.
type AWSRole struct {
	ARN, ExternalID string
}

// Compression levels a producer.compression_level may name, by codec.
const (
	MaxGzipLevel = 9
	MaxZstdLevel = 22
)

// checkLevel checks CompressionLevel against the codec of Compression.
func (w *Producer) checkLevel(c *checker, path string) {
	lvl := w.CompressionLevel
	if lvl == 0 {
		return
	}
	switch w.Compression {
	case "gzip":
		if lvl < 1 || lvl > MaxGzipLevel {
			c.addf(path, "%d is not a gzip level: use 1 (fastest) to %d (smallest), or 0 for gzip's default (6)", lvl, MaxGzipLevel)
		}
	case "zstd":
		if lvl < 1 || lvl > MaxZstdLevel {
			c.addf(path, "%d is not a zstd level catchup offers: use 1 (fastest) to %d (smallest), or 0 for zstd's default (3); "+
				"zstd's negative (fast) levels are not offered", lvl, MaxZstdLevel)
		}
	default:
		c.addf(path, "%d: producer.compression %q takes no level; compression_level is for gzip and zstd: remove it", lvl, w.Compression)
	}
}

func (w *Producer) check(c *checker, path string) {
	at := func(field string) string { return path + "." + field }
	c.enum(at("acks"), w.Acks, "all", "leader", "none")
	if w.Acks == "none" && !w.AllowDataLoss {
		c.addf(at("acks"), `"none" can lose records silently: the producer never learns whether a write arrived, yet the checkpoint moves past it; `+
			"use acks: all, or set allow_data_loss: true to accept the loss")
	}
	c.enum(at("compression"), w.Compression, "none", "gzip", "snappy", "lz4", "zstd")
	w.checkLevel(c, at("compression_level"))
	if w.BatchRecords <= 0 {
		c.addf(at("batch_records"), "%d must be positive", w.BatchRecords)
	}
	if w.BatchBytes <= 0 || w.BatchBytes > maxBatchBytes {
		c.addf(at("batch_bytes"), "%d must be from 1 to %d: the broker rejects a larger request whole under its default message.max.bytes", w.BatchBytes, maxBatchBytes)
	}
	if w.Retries < 0 {
		c.addf(at("retries"), "%d is negative; use 0 for no retries", w.Retries)
	}
	if w.RetryBackoff <= 0 {
		c.addf(at("retry_backoff"), "%v must be positive", w.RetryBackoff)
	}
	if w.Timeout <= 0 {
		c.addf(at("timeout"), "%v must be positive", w.Timeout)
	}
}

// isName reports whether s is a non-empty run of letters, digits, '.', '_'
// and '-': safe as a checkpoint key, header value and log field.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return fmt.Errorf("%q is not host:port (like \"b-1.example.com:9092\")", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port %q is not a number from 1 to 65535", s, port)
	}
	return nil
}

// checkFile returns an error naming the file unless name is empty or a
// regular file that exists.
func checkFile(name string) error {
	if name == "" {
		return nil
	}
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("file %q does not exist", name)
	case err != nil:
		return fmt.Errorf("file %q: %w", name, err)
	case st.IsDir():
		return fmt.Errorf("%q is a directory, not a file", name)
	}
	return nil
}

// StoreLocation is File.Store parsed.
type StoreLocation struct {
	// Scheme is "file" or "dynamodb".
	Scheme string
	// Path is a directory for "file" and a table name for "dynamodb".
	Path string
}

// StoreLocation parses f.Store, "file://PATH" or "dynamodb://TABLE".
func (f *File) StoreLocation() (StoreLocation, error) {
	scheme, rest, ok := strings.Cut(f.Store, "://")
	switch {
	case !ok || scheme != "file" && scheme != "dynamodb":
		return StoreLocation{}, fmt.Errorf("%q is not file://PATH or dynamodb://TABLE", f.Store)
	case rest == "":
		return StoreLocation{}, fmt.Errorf("%q names no path or table", f.Store)
	case scheme == "dynamodb" && !isTableName(rest):
		return StoreLocation{}, fmt.Errorf("%q: a DynamoDB table name has 3 to 255 letters, digits, '.', '_' and '-'", f.Store)
	}
	return StoreLocation{Scheme: scheme, Path: rest}, nil
}

func isTableName(s string) bool {
	return len(s) >= 3 && len(s) <= 255 && isName(s)
}

// StartKind says where a partition without a checkpoint starts.
type StartKind int

// Start kinds.
const (
	StartEarliest  StartKind = iota // at the log start offset
	StartLatest                     // at the end: only records produced from now on
	StartTimestamp                  // at the first record at or after StartPolicy.Time
)

func (k StartKind) String() string {
	switch k {
	case StartEarliest:
		return "earliest"
	case StartLatest:
		return "latest"
	case StartTimestamp:
		return "timestamp"
	}
	return "StartKind(" + strconv.Itoa(int(k)) + ")"
}

// StartPolicy is Pipeline.Start parsed.
type StartPolicy struct {
	Kind StartKind
	Time time.Time // StartTimestamp only
}

// StartPolicy parses p.Start: "earliest" (or empty), "latest", or an RFC
// 3339 timestamp such as "2024-05-01T00:00:00Z".
func (p *Pipeline) StartPolicy() (StartPolicy, error) {
	switch p.Start {
	case "", "earliest":
		return StartPolicy{Kind: StartEarliest}, nil
	case "latest":
		return StartPolicy{Kind: StartLatest}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, p.Start)
	if err != nil {
		return StartPolicy{}, fmt.Errorf("%q is not valid; use earliest, latest or an RFC 3339 timestamp like \"2024-05-01T00:00:00Z\"", p.Start)
	}
	return StartPolicy{Kind: StartTimestamp, Time: t}, nil
}

// Pipeline returns the pipeline called name. With an empty name it returns
// the only pipeline, if there is exactly one. The error lists the names.
func (f *File) Pipeline(name string) (*Pipeline, error) {
	names := make([]string, len(f.Pipelines))
	for i := range f.Pipelines {
		if name != "" && f.Pipelines[i].Name == name {
			return &f.Pipelines[i], nil
		}
		names[i] = f.Pipelines[i].Name
	}
	switch {
	case name == "" && len(f.Pipelines) == 1:
		return &f.Pipelines[0], nil
	case len(f.Pipelines) == 0:
		return nil, errors.New("pipeline: the config has no pipelines")
	case name == "":
		return nil, fmt.Errorf("pipeline: the config has %d pipelines, name one of: %s", len(names), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("pipeline %q: no such pipeline; available: %s", name, strings.Join(names, ", "))
}

// count returns how many of values are not empty.
func count(values ...string) int {
	n := 0
	for _, v := range values {
		if v != "" {
			n++
		}
	}
	return n
}
