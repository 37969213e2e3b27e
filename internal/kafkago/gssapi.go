package kafkago

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/segmentio/kafka-go/sasl"
)

// Kerberos configures SASL GSSAPI: the client principal logs in to the
// KDCs of the krb5.conf Krb5Conf with the keys of KeytabFile, or with
// Password, and asks for a ticket to ServiceName/HOST, HOST being the
// broker's host as dialled (the address the cluster advertises).
type Kerberos struct {
	// Principal is "NAME[/INSTANCE][@REALM]"; without a realm,
	// krb5.conf's default_realm.
	Principal string
	// KeytabFile holds the principal's keys; "" logs in with Password.
	KeytabFile string
	Password   Secret
	// Krb5Conf is the path of krb5.conf, which names the realm's KDCs.
	Krb5Conf string
	// ServiceName is the first part of the brokers' service principal
	// (Kafka's sasl.kerberos.service.name), such as "kafka".
	ServiceName string
}

// GSSAPI's RFC 4752 security layers, the bit mask of the broker's offer.
const noSecurityLayer = 1

// gssapiMech is SASL GSSAPI (RFC 4752) as Kafka speaks it over
// SaslAuthenticate, with gokrb5 for Kerberos itself (logging in, tickets,
// the AP-REQ and the wrap tokens): kafka-go has no GSSAPI mechanism, and
// the exchange around gokrb5 is three messages.
//
// The client asks for no mutual authentication, so the broker answers the
// AP-REQ with its wrap token at once, without an AP-REP; that token's
// checksum, made with the ticket's session key, which only the holder of
// the service's key can read, authenticates the broker.
type gssapiMech struct {
	client *krbclient.Client
	// login serialises logging in: connections dialled at once would
	// otherwise each log in, and each start a renewal goroutine.
	login sync.Mutex
	// life guards client against close: kafka-go may still be dialling
	// (its metadata refresh runs in the background) when the cluster is
	// closed, and Destroy clears what a login in flight reads.
	life    sync.RWMutex
	closed  bool
	service string
	// from says how the principal logs in, for errors: never a secret.
	from string
}

func (*gssapiMech) Name() string { return "GSSAPI" }

// Start logs in (once; gokrb5 renews the ticket-granting ticket), gets a
// service ticket for the broker being dialled, and returns the AP-REQ in a
// GSS-API initial context token (RFC 2743 section 3.1, RFC 4121 section
// 4.1).
func (m *gssapiMech) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	md := sasl.MetadataFromContext(ctx)
	if md == nil || md.Host == "" {
		return nil, nil, errors.New("no broker host to name the service principal") // kafka-go always gives one
	}
	m.life.RLock()
	defer m.life.RUnlock()
	if m.closed {
		return nil, nil, errors.New("the cluster's connections are closed")
	}
	m.login.Lock()
	err := m.client.AffirmLogin()
	m.login.Unlock()
	if err != nil {
		return nil, nil, fmt.Errorf("log in to the KDC %s: %w; check the principal and its keys (klist -kt KEYTAB), "+
			"and that krb5.conf names the realm's KDC", m.from, err)
	}
	spn := m.service + "/" + md.Host
	tkt, key, err := m.client.GetServiceTicket(spn)
	if err != nil {
		return nil, nil, fmt.Errorf("service ticket for %s: %w; the broker's principal must be %s@REALM, "+
			"with REALM the one krb5.conf maps the host to (else the default realm), or set service_name", spn, err, spn)
	}
	ir, err := initialContextToken(m.client, tkt, key)
	if err != nil {
		return nil, nil, fmt.Errorf("AP-REQ for %s: %w", spn, err)
	}
	return &gssapiSession{key: key, spn: spn}, ir, nil
}

// initialContextToken is the AP-REQ of tkt in a GSS-API initial context
// token: [APPLICATION 0] { the Kerberos 5 mechanism OID, token id 01 00,
// the AP-REQ } (RFC 2743 section 3.1, RFC 4121 section 4.1). Its
// authenticator's checksum asks for integrity and confidentiality, as the
// Java client does, and not for mutual authentication. Written here rather
// than with gokrb5's spnego package, which links an HTTP session library.
func initialContextToken(cl *krbclient.Client, tkt messages.Ticket, key types.EncryptionKey) ([]byte, error) {
	auth, err := types.NewAuthenticator(cl.Credentials.Domain(), cl.Credentials.CName())
	if err != nil {
		return nil, err
	}
	// RFC 4121 section 4.1.1: the length of the channel binding (16), a
	// zero binding, then the flags, little-endian.
	sum := make([]byte, 24)
	binary.LittleEndian.PutUint32(sum[0:4], 16)
	binary.LittleEndian.PutUint32(sum[20:24], gssapi.ContextFlagInteg|gssapi.ContextFlagConf)
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: sum}
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		return nil, err
	}
	ap, err := req.Marshal()
	if err != nil {
		return nil, err
	}
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return nil, err
	}
	tok := append(append(oid, 0x01, 0x00), ap...)
	return asn1tools.AddASNAppTag(tok, 0), nil
}

// gssapiSession is one connection's exchange after the AP-REQ.
type gssapiSession struct {
	key  types.EncryptionKey // the service ticket's session key
	spn  string
	step int
}

// Next answers the broker's wrap token, which offers security layers and
// a maximum message size (RFC 4752 section 3.1), with a wrap token that
// selects no security layer (TLS, when wanted, protects the connection)
// and a maximum size of 0, as RFC 4752 asks of a client with no layer; the
// broker's empty answer to it ends the exchange.
func (s *gssapiSession) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	s.step++
	switch s.step {
	case 1:
		var wt gssapi.WrapToken
		if err := wt.Unmarshal(challenge, true); err != nil {
			return false, nil, fmt.Errorf("the broker's security layer offer: %w", err)
		}
		if ok, err := wt.Verify(s.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
			return false, nil, fmt.Errorf("the broker's security layer offer does not verify with the ticket for %s: "+
				"the broker may not hold that principal's current key: %w", s.spn, err)
		}
		if len(wt.Payload) != 4 {
			return false, nil, fmt.Errorf("the broker's security layer offer has %d bytes, not 4", len(wt.Payload))
		}
		if wt.Payload[0]&noSecurityLayer == 0 {
			return false, nil, fmt.Errorf("the broker offers security layers %#x but not \"none\": catchup leaves "+
				"protection to TLS; configure the listener without a SASL QOP (sasl.qop), or use SASL_SSL", wt.Payload[0])
		}
		reply, err := gssapi.NewInitiatorWrapToken([]byte{noSecurityLayer, 0, 0, 0}, s.key)
		if err != nil {
			return false, nil, fmt.Errorf("security layer answer: %w", err)
		}
		b, err := reply.Marshal()
		if err != nil {
			return false, nil, fmt.Errorf("security layer answer: %w", err)
		}
		return false, b, nil
	case 2:
		if len(challenge) != 0 {
			return false, nil, fmt.Errorf("the broker sent %d bytes after the exchange had ended", len(challenge))
		}
		return true, nil, nil
	}
	return false, nil, errors.New("the broker went on after the exchange had ended")
}

// gssapiMechanism returns the GSSAPI mechanism of k. It reads krb5.conf
// and the keytab, but does not contact the KDC: that happens when the
// first connection authenticates.
func gssapiMechanism(k *Kerberos) (*gssapiMech, error) {
	if k == nil || k.Principal == "" {
		return nil, errors.New("GSSAPI needs a principal")
	}
	if k.Krb5Conf == "" || k.ServiceName == "" {
		return nil, errors.New("GSSAPI needs krb5.conf and the service name") // config fills both in
	}
	confPath := k.Krb5Conf
	conf, err := krbconfig.Load(confPath)
	if err != nil {
		return nil, fmt.Errorf("krb5.conf %s: %w", confPath, err)
	}
	name, realm, _ := strings.Cut(k.Principal, "@")
	if realm == "" {
		realm = conf.LibDefaults.DefaultRealm
	}
	if realm == "" {
		return nil, fmt.Errorf("principal %q has no realm and %s has no default_realm: write it NAME@REALM", k.Principal, confPath)
	}
	// Active Directory refuses PA-FX-FAST; MIT and Kerby do without it.
	settings := krbclient.DisablePAFXFAST(true)
	m := &gssapiMech{service: k.ServiceName}
	switch {
	case k.KeytabFile != "":
		kt, err := keytab.Load(k.KeytabFile)
		if err != nil {
			// gokrb5's errors name the file or the format, never a key.
			return nil, fmt.Errorf("keytab %s: %w", k.KeytabFile, err)
		}
		m.client = krbclient.NewWithKeytab(name, realm, kt, conf, settings)
		m.from = fmt.Sprintf("as %s@%s with keytab %s", name, realm, k.KeytabFile)
	case k.Password != nil && k.Password.Reveal() != "":
		m.client = krbclient.NewWithPassword(name, realm, k.Password.Reveal(), conf, settings)
		m.from = fmt.Sprintf("as %s@%s with a password", name, realm)
	default:
		return nil, fmt.Errorf("no keytab and no password for principal %q", k.Principal)
	}
	if ok, err := m.client.IsConfigured(); !ok {
		return nil, fmt.Errorf("principal %s@%s with %s: %w", name, realm, confPath, err)
	}
	return m, nil
}

// close stops gokrb5's renewal of the ticket-granting ticket, once no
// connection is logging in; a later Start fails.
func (m *gssapiMech) close() {
	m.life.Lock()
	defer m.life.Unlock()
	if !m.closed {
		m.closed = true
		m.client.Destroy()
	}
}
