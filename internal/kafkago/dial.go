package kafkago

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/aws_msk_iam_v2"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/kafka-catchup/catchup/internal/awsapi"
)

// DefaultDialTimeout bounds TCP, the TLS handshake and SASL together when
// Settings give no DialTimeout: the configuration's default too
// (config.DefaultDialTimeout).
const DefaultDialTimeout = 10 * time.Second

// Transport settings. MetadataTTL is short because kafka-go's Transport does
// not refresh metadata on NOT_LEADER_OR_FOLLOWER: with its default of 6s a
// leader move stalled produce for up to 6.4s (KAFKA-GO-NOTES.md).
const (
	metadataTTL = time.Second
	// idleTimeout stays well below Kafka's connections.max.idle.ms (10m), so
	// that the broker does not close a connection the Transport still
	// believes usable: a produce on such a connection ends in EOF after the
	// write, an unknown outcome.
	idleTimeout = 30 * time.Second
	// requestTimeout bounds a metadata, list-offsets or fetch round trip
	// when the caller's context has no earlier deadline.
	requestTimeout = 30 * time.Second
)

// Settings say how to reach one Kafka cluster: plain values, every secret
// already resolved. internal/pipeline makes them from the configuration
// (pipeline.Connect); kafkago knows nothing of the configuration file.
type Settings struct {
	// Name names the cluster in errors.
	Name    string
	Brokers []string
	// ClientID is sent with every request, as given.
	ClientID string
	TLS      *TLS  // nil: plaintext
	SASL     *SASL // nil: no authentication
	// DialTimeout bounds a connection: TCP, TLS handshake and SASL
	// together; 0: 10 seconds.
	DialTimeout time.Duration
}

// TLS configures TLS to a cluster. Verification is on unless
// InsecureSkipVerify is set; a CAFile adds to no roots but its own.
type TLS struct {
	CAFile, CertFile, KeyFile string
	ServerName                string
	InsecureSkipVerify        bool
}

// SASL configures SASL authentication.
type SASL struct {
	// Mechanism is "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
	// "AWS_MSK_IAM", "OAUTHBEARER" or "GSSAPI".
	Mechanism string
	Username  string
	// Password, resolved, for PLAIN and SCRAM.
	Password Secret
	// OAuth, for OAUTHBEARER, says where its token comes from.
	OAuth *OAuth
	// Kerberos, for GSSAPI, says how the principal logs in.
	Kerberos *Kerberos
	// Region for AWS_MSK_IAM; "" takes the AWS configuration's.
	Region string
	// RoleARN, for AWS_MSK_IAM, is an IAM role to sign as, assumed with
	// STS AssumeRole (ExternalID, if set, is the external id its trust
	// policy asks for); "" signs with the default credentials.
	RoleARN, ExternalID string
}

// Secret is a resolved password: config.Secret, which prints as
// "[REDACTED]" with every verb, in every log and error. Only Dial reveals
// it, to hand it to the SASL mechanism.
type Secret interface{ Reveal() string }

// Cluster is a connection pool to one Kafka cluster: a kafka-go Transport
// that knows the cluster's layout and routes each request to the right
// broker. It is safe for concurrent use.
type Cluster struct {
	name        string
	clientID    string
	dialTimeout time.Duration
	mechanism   string       // SASL mechanism, "" without SASL
	user        string       // SASL user, for error messages
	corr        atomic.Int32 // correlation ids of the requests written by exchange

	// mu guards the Transport, which watch replaces by one whose
	// background metadata refresh covers only the topics in use.
	mu      sync.RWMutex
	cur     *pool
	client  *kafka.Client // over the current Transport (currentTransport)
	addr    net.Addr
	tls     *tls.Config
	sasl    sasl.Mechanism
	watched []string // sorted topics of the refresh
	// closeSASL releases what the mechanism holds (GSSAPI's ticket
	// renewal); nil for the others.
	closeSASL func()
}

// pool is one kafka-go Transport of a Cluster and the round trips in
// flight on it. A Transport watch replaced is closed when its last round
// trip ends, not before: kafka-go makes a round trip on a closed Transport
// a new connection pool, whose metadata refresh nothing would ever stop.
type pool struct {
	transport *kafka.Transport
	trips     atomic.Int64 // round trips in flight
	retired   atomic.Bool  // replaced by watch, or the Cluster closed
}

// retire closes p's idle connections and stops its refresh once no round
// trip uses it. The caller holds the Cluster's mu, so that no round trip
// takes p after it.
func (p *pool) retire() {
	p.retired.Store(true)
	if p.trips.Load() == 0 {
		p.transport.CloseIdleConnections()
	}
}

// done ends a round trip that use began.
func (p *pool) done() {
	if p.trips.Add(-1) == 0 && p.retired.Load() {
		p.transport.CloseIdleConnections() // (again, harmlessly, if retire saw no trip either)
	}
}

// use begins a round trip on the current Transport; the caller calls done
// when it ends.
func (c *Cluster) use() *pool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p := c.cur
	p.trips.Add(1)
	return p
}

// currentTransport is the kafka.RoundTripper of Cluster.client: every round
// trip goes to the Transport current when it starts.
type currentTransport struct{ c *Cluster }

// RoundTrip implements kafka.RoundTripper.
func (t currentTransport) RoundTrip(ctx context.Context, addr net.Addr, req kafka.Request) (kafka.Response, error) {
	p := t.c.use()
	defer p.done()
	return p.transport.RoundTrip(ctx, addr, req)
}

// Dial prepares a connection pool to the cluster c. It does no network I/O:
// connections, TLS handshakes and SASL authentication happen on first use,
// and their errors name the cluster and the SASL mechanism.
func Dial(c Settings) (*Cluster, error) {
	if len(c.Brokers) == 0 {
		return nil, fmt.Errorf("cluster %q: no brokers", c.Name)
	}
	cl := &Cluster{name: c.Name, clientID: c.ClientID, dialTimeout: c.DialTimeout}
	if cl.dialTimeout <= 0 {
		cl.dialTimeout = DefaultDialTimeout
	}
	tc, err := tlsConfig(c.TLS)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: tls: %w", c.Name, err)
	}
	var mech sasl.Mechanism
	if c.SASL != nil {
		cl.mechanism, cl.user = c.SASL.Mechanism, c.SASL.Username
		if mech, err = saslMechanism(c.SASL); err != nil {
			return nil, fmt.Errorf("cluster %q: sasl %s: %w", c.Name, c.SASL.Mechanism, err)
		}
		if g, ok := mech.(*gssapiMech); ok {
			cl.closeSASL = g.close
		}
		mech = namedMechanism{Mechanism: mech, cluster: c.Name, user: c.SASL.Username}
	}
	cl.addr, cl.tls, cl.sasl = kafka.TCP(c.Brokers...), tc, mech
	// No topic until one is named (watch, cover): the refresh starts with
	// the brokers only, and never asks for every topic of the cluster.
	cl.cur = cl.newPool([]string{})
	cl.client = &kafka.Client{Addr: cl.addr, Transport: currentTransport{cl}}
	return cl, nil
}

// newPool returns a Transport whose background metadata refresh asks for
// topics (nil: every topic).
func (c *Cluster) newPool(topics []string) *pool {
	t := &kafka.Transport{
		DialTimeout:    c.dialTimeout,
		IdleTimeout:    idleTimeout,
		MetadataTTL:    metadataTTL,
		MetadataTopics: topics,
		ClientID:       c.clientID,
		TLS:            c.tls,
		SASL:           c.sasl,
	}
	return &pool{transport: t}
}

// watch adds topics to the Transport's background metadata refresh (every
// metadataTTL), which covers only the topics in use: a topic once watched
// stays routable. Without it the refresh would ask for, and kafka-go
// decode, every topic of the cluster about twice a second for as long as
// the process runs: at 10,000 partitions, requests that grow with the run's
// length and memory that grows with the cluster rather than the pipeline.
// A change replaces the Transport:
// requests in flight finish on the old one, which is closed, its refresh
// stopped, when the last ends (pool). It costs one connection per broker,
// so callers name all their topics at once where they can.
func (c *Cluster) watch(topics []string) {
	if len(topics) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	next := slices.Clone(c.watched)
	for _, t := range topics {
		if i, found := slices.BinarySearch(next, t); !found {
			next = slices.Insert(next, i, t)
		}
	}
	if len(next) == len(c.watched) {
		return // nothing new
	}
	old := c.cur
	c.watched = next
	c.cur = c.newPool(next)
	old.retire()
}

// cover makes sure the refresh covers topic: a fetch, produce or read-back
// of a topic no listing or list-offsets named first would otherwise find no
// route.
func (c *Cluster) cover(topic string) {
	c.mu.RLock()
	_, covered := slices.BinarySearch(c.watched, topic)
	c.mu.RUnlock()
	if !covered {
		c.watch([]string{topic})
	}
}

// Name is the cluster's name from its configuration.
func (c *Cluster) Name() string { return c.name }

// Client is a kafka-go client over the cluster's Transport, for admin calls.
// Its Metadata answers come from the Transport's cache (at most 1s old).
func (c *Cluster) Client() *kafka.Client { return c.client }

// Close closes the idle connections and stops the Transport's background
// metadata refresh. Requests in flight finish first.
func (c *Cluster) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur.retire()
	if c.closeSASL != nil {
		c.closeSASL()
	}
}

// tlsConfig returns nil for plaintext.
func tlsConfig(t *TLS) (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, //nolint:gosec // the operator asked for it in the configuration
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file %s: no PEM certificate found", t.CAFile)
		}
		tc.RootCAs = pool
	}
	switch {
	case t.CertFile != "" && t.KeyFile != "":
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case t.CertFile != "" || t.KeyFile != "":
		return nil, errors.New("cert_file and key_file go together: set both or neither")
	}
	return tc, nil
}

func saslMechanism(s *SASL) (sasl.Mechanism, error) {
	switch s.Mechanism {
	case "AWS_MSK_IAM":
		return mskIAM(s.Region, s.RoleARN, s.ExternalID)
	case "OAUTHBEARER":
		return oauthMechanism(s.OAuth)
	case "GSSAPI":
		return gssapiMechanism(s.Kerberos)
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return nil, fmt.Errorf("unknown mechanism %q: want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, AWS_MSK_IAM, OAUTHBEARER or GSSAPI", s.Mechanism)
	}
	if s.Password == nil || s.Password.Reveal() == "" {
		return nil, fmt.Errorf("no password for user %q", s.Username)
	}
	pw := s.Password.Reveal()
	switch s.Mechanism {
	case "PLAIN":
		return plain.Mechanism{Username: s.Username, Password: pw}, nil
	case "SCRAM-SHA-256":
		return scramMechanism(scram.SHA256, s.Username, pw)
	default:
		return scramMechanism(scram.SHA512, s.Username, pw)
	}
}

func scramMechanism(algo scram.Algorithm, user, pw string) (sasl.Mechanism, error) {
	m, err := scram.Mechanism(algo, user, pw)
	if err != nil {
		// The SCRAM library's errors are about SASLprep of the
		// credentials; they never quote the password, but say so anyway.
		return nil, fmt.Errorf("user %q or its password is not valid for SCRAM (SASLprep): %w", user, err)
	}
	return m, nil
}

// mskIAM signs with the default AWS credentials chain (environment, shared
// files, web identity, ECS/EC2 roles), or as roleARN assumed with them;
// credentials are resolved, and refreshed, when each connection
// authenticates.
func mskIAM(region, roleARN, externalID string) (sasl.Mechanism, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
	}
	// LoadDefaultConfig reads the environment and the shared files only.
	cfg, err := awsapi.Config(context.Background(), opts...)
	if err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set sasl.region or AWS_REGION")
	}
	if roleARN != "" {
		cfg = awsapi.AssumeRole(cfg, roleARN, externalID)
	}
	return aws_msk_iam_v2.NewMechanism(cfg), nil
}

// namedMechanism makes the errors of a SASL mechanism's own steps (signing,
// SCRAM proofs) name the cluster, the mechanism and the user.
type namedMechanism struct {
	sasl.Mechanism
	cluster, user string
}

func (m namedMechanism) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	sm, ir, err := m.Mechanism.Start(ctx)
	if err != nil {
		return nil, nil, m.wrap(err)
	}
	return namedSession{sm, m}, ir, nil
}

func (m namedMechanism) wrap(err error) error {
	return &saslStepError{fmt.Errorf("cluster %q: SASL %s authentication%s: %w", m.cluster, m.Name(), asUser(m.user), err)}
}

// saslStepError marks an error of a SASL mechanism's own step.
type saslStepError struct{ err error }

func (e *saslStepError) Error() string { return e.err.Error() }
func (e *saslStepError) Unwrap() error { return e.err }

type namedSession struct {
	sasl.StateMachine
	m namedMechanism
}

func (s namedSession) Next(ctx context.Context, challenge []byte) (bool, []byte, error) {
	done, resp, err := s.StateMachine.Next(ctx, challenge)
	if err != nil {
		return done, resp, s.m.wrap(err)
	}
	return done, resp, nil
}

// isAuthOrTLS reports whether err came from authentication or TLS: the
// broker refused the credentials, a SASL step failed, or the certificates
// did not verify. Retrying does not help.
func isAuthOrTLS(err error) bool {
	var kerr kafka.Error
	if errors.As(err, &kerr) {
		return kerr == kafka.SASLAuthenticationFailed || kerr == kafka.UnsupportedSASLMechanism || kerr == kafka.IllegalSASLState
	}
	return errors.As(err, new(*saslStepError)) || isTLS(err)
}

func isTLS(err error) bool {
	return errors.As(err, new(*tls.CertificateVerificationError)) || errors.As(err, new(x509.UnknownAuthorityError)) ||
		errors.As(err, new(x509.HostnameError)) || errors.As(err, new(x509.CertificateInvalidError)) ||
		errors.As(err, new(tls.AlertError)) || errors.As(err, new(tls.RecordHeaderError))
}

// authError names the cluster and the SASL mechanism in an error from
// authentication or TLS, and returns nil for every other error.
func (c *Cluster) authError(err error) error {
	switch {
	case !isAuthOrTLS(err):
		return nil
	case errors.As(err, new(*saslStepError)):
		return err // named by namedMechanism
	case isTLS(err):
		return fmt.Errorf("cluster %q: TLS: %w", c.name, err)
	}
	if errors.Is(err, kafka.IllegalSASLState) {
		return fmt.Errorf("cluster %q: the broker refused the SASL %s handshake: the listener may not use SASL (PLAINTEXT or SSL): remove the sasl block, or use the broker's SASL_PLAINTEXT or SASL_SSL port: %w",
			c.name, c.mechanism, err)
	}
	if errors.Is(err, kafka.UnsupportedSASLMechanism) {
		return fmt.Errorf("cluster %q: the listener does not enable SASL %s: set sasl.mechanism to one of its enabled mechanisms (the broker's sasl.enabled.mechanisms): %w",
			c.name, c.mechanism, err)
	}
	return fmt.Errorf("cluster %q: SASL %s authentication%s failed: %w", c.name, c.mechanism, asUser(c.user), err)
}

// asUser is " as user NAME" for an error message, "" without a user (an
// OAUTHBEARER token file).
func asUser(user string) string {
	if user == "" {
		return ""
	}
	return fmt.Sprintf(" as user %q", user)
}

// expectsTLS reports whether kafka-go read a TLS alert where it expected a
// Kafka response: it says so only in the message (protocol/response.go),
// with no type to test.
func expectsTLS(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) && strings.Contains(err.Error(), "broker appears to be expecting TLS")
}

// explainedError is a connection error whose message already says what the
// settings may have got wrong, which listenerHint leaves alone.
type explainedError struct{ err error }

func (e *explainedError) Error() string { return e.err.Error() }
func (e *explainedError) Unwrap() error { return e.err }

// listenerHint explains a connection that ended or stalled before a
// response (EOF, a reset, a timeout, a non-TLS answer to a TLS handshake),
// the sign of settings that do not match the listener's protocol: it names
// the cluster, what the listener likely is and the fix. It returns nil for
// every other error. A broker restarting can end a connection the same way,
// so the hint says "may".
func (c *Cluster) listenerHint(err error) error {
	var ne net.Error
	var rh tls.RecordHeaderError
	timeout := errors.As(err, &ne) && ne.Timeout()
	closed := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
	notTLS := errors.As(err, &rh)
	if !timeout && !closed && !notTLS || errors.As(err, new(*saslStepError)) || errors.As(err, new(*explainedError)) {
		return nil
	}
	what := "the connection was closed"
	if timeout {
		what = fmt.Sprintf("no answer within the dial timeout (%v)", c.dialTimeout)
	}
	var fix string
	switch {
	case c.tls == nil && expectsTLS(err):
		what = "the broker answered with a TLS alert"
		fix = "the listener is SSL or SASL_SSL: add a tls block (tls: {}, and ca_file for a private CA)"
		if c.mechanism == "" {
			fix += ", and for SASL_SSL a sasl block"
		}
	case c.tls != nil && notTLS:
		fix = "the listener answered without TLS: it is PLAINTEXT or SASL_PLAINTEXT: remove the tls block, or use the broker's SSL or SASL_SSL port"
	case c.tls != nil && c.mechanism == "":
		fix = "if the listener is PLAINTEXT or SASL_PLAINTEXT, remove the tls block (or use the broker's SSL or SASL_SSL port); if it is SASL_SSL, add a sasl block"
	case c.tls != nil:
		fix = "if the listener is PLAINTEXT or SASL_PLAINTEXT, remove the tls block, or use the broker's SSL or SASL_SSL port"
	case c.mechanism == "":
		fix = "if the listener is SSL or SASL_SSL, add a tls block; if it is SASL_PLAINTEXT or SASL_SSL, add a sasl block (the broker's listener.security.protocol.map says which)"
	default:
		fix = "if the listener is SASL_SSL, add a tls block"
	}
	if timeout {
		fix += "; or the broker is unreachable from here (check the host and port), or needs a longer dial_timeout"
	}
	return fmt.Errorf("cluster %q (%s): %s; the connection settings may not match the listener: %s: %w", c.name, c.addr, what, fix, err)
}
